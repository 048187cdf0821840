// Permission scopes of spec section 5: `resource:verb`, deny by default,
// `manage` implies `read`, `*` grants everything, `secrets` and `account`
// take only `manage`. Key creation normalises a scope set once, here.
import { InvalidArgumentError, PermissionDeniedError } from '../errors';

export const ScopeResource = [
  'agents',
  'objectives',
  'tools',
  'memory',
  'api_keys',
  'workspaces',
  'widgets',
  'widget_sessions',
  'secrets',
  'account',
] as const;
export type ScopeResource = (typeof ScopeResource)[number];
export type ScopeVerb = 'read' | 'manage';
/** A scope a route requires, e.g. `agents:read`. */
export type Scope = `${ScopeResource}:${ScopeVerb}`;

const MANAGE_ONLY: readonly ScopeResource[] = ['secrets', 'account'];
export const FULL_ACCESS = '*';

/**
 * Validates and normalises a stored scope set: duplicates removed, `x:read`
 * dropped when `x:manage` is present, `*` alone when granted, sorted.
 * @throws InvalidArgumentError naming `spec.permissions[i]`
 */
export function normalizeScopes(permissions: readonly string[], field = 'spec.permissions'): string[] {
  const granted = new Set<string>();
  permissions.forEach((permission, index) => {
    if (permission === FULL_ACCESS) return void granted.add(FULL_ACCESS);
    const [resource, verb, extra] = permission.split(':');
    const where = `${field}[${index}]`;
    if (extra !== undefined || !verb) throw InvalidArgumentError.forField(where, `"${permission}" is not a resource:verb scope`);
    if (!(ScopeResource as readonly string[]).includes(resource)) {
      throw InvalidArgumentError.forField(where, `unknown resource "${resource}" (one of ${ScopeResource.join(', ')})`);
    }
    if (verb !== 'read' && verb !== 'manage') throw InvalidArgumentError.forField(where, `unknown verb "${verb}" (read or manage)`);
    if (verb === 'read' && MANAGE_ONLY.includes(resource as ScopeResource)) {
      throw InvalidArgumentError.forField(where, `"${resource}" supports only the manage verb`);
    }
    granted.add(permission);
  });
  if (granted.has(FULL_ACCESS)) return [FULL_ACCESS];
  for (const permission of [...granted]) {
    const [resource, verb] = permission.split(':');
    if (verb === 'read' && granted.has(`${resource}:manage`)) granted.delete(permission);
  }
  return [...granted].sort();
}

/** True when a granted scope set allows `required` (deny by default). */
export function scopeAllows(granted: readonly string[], required: Scope): boolean {
  if (granted.includes(FULL_ACCESS) || granted.includes(required)) return true;
  const [resource, verb] = required.split(':');
  return verb === 'read' && granted.includes(`${resource}:manage`);
}

/**
 * Checks that a principal holding `granted` may hand out `permissions` (a new
 * key's, or a key's whose token it would obtain): never more than it holds,
 * so `api_keys:manage` cannot mint or rotate its way to a broader key.
 * @throws PermissionDeniedError naming the first permission it does not hold
 */
export function assertCanGrant(granted: readonly string[], permissions: readonly string[]): void {
  const missing = firstNotHeld(granted, permissions);
  if (missing) throw new PermissionDeniedError(`this credential cannot grant "${missing}", which it does not hold itself`);
}

/**
 * Checks that a principal may disable or delete a key holding `permissions`:
 * a narrow key must not switch off a broader one.
 * @throws PermissionDeniedError naming the first permission it does not hold
 */
export function assertCanManageKeyHolding(granted: readonly string[], permissions: readonly string[]): void {
  const missing = firstNotHeld(granted, permissions);
  if (missing) throw new PermissionDeniedError(`this credential cannot manage a key holding "${missing}", which it does not hold itself`);
}

function firstNotHeld(granted: readonly string[], permissions: readonly string[]): string | undefined {
  return permissions.find((permission) => !(permission === FULL_ACCESS ? granted.includes(FULL_ACCESS) : scopeAllows(granted, permission as Scope)));
}
