// Spec section 5 item 6: when a tool set is managed, only API key principals may
// change it or its tools; human (USER) principals get PERMISSION_DENIED.
import type { Principal } from '../auth/principal';
import { PermissionDeniedError } from '../errors';

/** @throws PermissionDeniedError when a non-API-key principal changes something managed */
export function assertMayChangeManaged(principal: Principal, what: string): void {
  if (principal.kind !== 'API_KEY') {
    throw new PermissionDeniedError(`${what} is managed: only API key principals can change it`);
  }
}
