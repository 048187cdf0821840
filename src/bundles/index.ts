// Public surface of the bundles area.
export { BundleService, type ApplyOptions } from './bundle.service';
export type { BundleServices, MemoryServices } from './context';
