// Test fixtures for workspace-scoped API tests: a fresh account whose workspace
// key holds chosen scopes, and a second workspace of the same account.
import assert from 'node:assert/strict';
import type { TestApi } from './api';
import type { BootstrapResult } from '../../src/accounts/account.service';

export interface WorkspaceFixture {
  account: BootstrapResult;
  workspaceId: string;
  /** A workspace key with `*`. */
  token: string;
  /** A workspace key with exactly `permissions`. */
  keyWith(permissions: string[]): Promise<string>;
  /** Another workspace of the same account, with a full-access key of its own. */
  otherWorkspace(): Promise<{ workspaceId: string; token: string }>;
}

async function createKey(api: TestApi, globalToken: string, workspaceId: string, permissions: string[]): Promise<string> {
  const response = await api.request('POST', `/v1/workspaces/${workspaceId}/api_keys`, {
    token: globalToken,
    body: { metadata: { name: `key-${permissions.join('-') || 'none'}` }, spec: { permissions } },
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.spec.token as string;
}

/** A fresh account and a full-access workspace key for its workspace. */
export async function workspaceFixture(api: TestApi): Promise<WorkspaceFixture> {
  const account = await api.bootstrap();
  const globalToken = account.globalApiKey.token;
  const token = await createKey(api, globalToken, account.workspaceId, ['*']);
  return {
    account,
    workspaceId: account.workspaceId,
    token,
    keyWith: (permissions) => createKey(api, globalToken, account.workspaceId, permissions),
    async otherWorkspace() {
      const created = await api.request('POST', '/v1/account/workspaces', { token: globalToken, body: { metadata: { name: `other-${Date.now()}` } } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const workspaceId = created.body.metadata.id as string;
      return { workspaceId, token: await createKey(api, globalToken, workspaceId, ['*']) };
    },
  };
}
