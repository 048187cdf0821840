// Small builders shared by API tests: accounts with extra workspaces and keys
// of chosen scopes, and Status-body assertions.
import assert from 'node:assert/strict';
import type { ApiResponse, TestApi } from './api';

export interface TestAccount {
  accountId: string;
  workspaceId: string;
  profileId: string;
  globalToken: string;
  globalKeyId: string;
}

export async function newAccount(api: TestApi): Promise<TestAccount> {
  const result = await api.bootstrap();
  return { accountId: result.accountId, workspaceId: result.workspaceId, profileId: result.profileId, globalToken: result.globalApiKey.token, globalKeyId: result.globalApiKey.id };
}

/** Creates a workspace with the global key and returns its id. */
export async function newWorkspace(api: TestApi, account: TestAccount, name = 'second'): Promise<string> {
  const response = await api.request('POST', '/v1/account/workspaces', { token: account.globalToken, body: { metadata: { name } } });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.metadata.id;
}

/** Creates a workspace key with the given permissions; returns its id and token. */
export async function newKey(api: TestApi, account: TestAccount, workspaceId: string, permissions: string[], name = 'key'): Promise<{ id: string; token: string }> {
  const response = await api.request('POST', `/v1/workspaces/${workspaceId}/api_keys`, {
    token: account.globalToken,
    body: { metadata: { name }, spec: { permissions } },
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return { id: response.body.metadata.id, token: response.body.spec.token };
}

/** Asserts a Status error body with the HTTP status and gRPC code (and optionally a message pattern). */
export function assertStatus(response: ApiResponse, httpStatus: number, code: number, message?: RegExp): void {
  assert.equal(response.status, httpStatus, `expected ${httpStatus}, got ${response.status}: ${JSON.stringify(response.body)}`);
  assert.equal(response.body.code, code, JSON.stringify(response.body));
  assert.equal(typeof response.body.message, 'string');
  assert.ok(Array.isArray(response.body.details));
  if (message) assert.match(response.body.message, message);
}

export const Code = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  UNAUTHENTICATED: 16,
} as const;

/** A syntactically valid id of a kind that does not exist. */
export function missingId(prefix: string): string {
  return `${prefix}_01ARZ3NDEKTSV4RRFFQ69G5FAV`;
}
