// Every TypeORM entity schema of the service, registered with the data source.
// Add one line per entity file.
import type { EntitySchema } from 'typeorm';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const entities: EntitySchema<any>[] = [];
