// Table statistics as autovacuum keeps them on a running service: it analyzes
// a table once a tenth of it changed, within a minute. A bench on a fresh
// database measures for less than that, so the generic plans its statements
// settle on during the warm-up were made on nearly empty tables and would
// scan them whole as they grow through the measured window. Benches take the
// statistics once their warm-up (or their setup) has filled the tables;
// ANALYZE=0 skips it, to see the first minute of a new install.
import type { DataSource } from 'typeorm';

export async function analyzeAsAutovacuumWould(dataSource: Pick<DataSource, 'query'>): Promise<void> {
  if (process.env.ANALYZE === '0') return;
  await dataSource.query('ANALYZE');
}
