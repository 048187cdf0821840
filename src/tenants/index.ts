// Public surface of the tenants area: the upsert functions objectives and
// widget sessions call, and the records they return.
export { TenantService, type UpsertOptions } from './tenant.service';
export { toSubject, toTenant } from './mappers';
export type { SubjectRecord, TenantRecord } from './records';
