// Account (spec 4.1), the caller's profile, and the global key endpoints of
// api-decisions.md.
import { Type } from '@sinclair/typebox';
import type { AccountService } from '../../src/accounts/account.service';
import type { ApiKeyService } from '../../src/accounts/api-key.service';
import { ApiKeyState } from '../../src/accounts/records';
import { Account, ApiKey, CallerProfile, WebhookSigningKey } from '../../src/schemas/account.schema';
import { defineRoute, type RouteDefinition } from '../route';

export interface AccountRoutesDependencies {
  accounts: AccountService;
  apiKeys: ApiKeyService;
}

export function accountRoutes({ accounts, apiKeys }: AccountRoutesDependencies): RouteDefinition[] {
  const globalKeyState = (state: ApiKeyState, verb: string) =>
    defineRoute({
      method: 'PUT', path: `/v1/account/global_api_key/${verb}`, operationId: `${verb}GlobalApiKey`, summary: `${verb[0].toUpperCase()}${verb.slice(1)} the global account key`,
      scope: 'account:manage', admin: true, workspace: 'none', response: ApiKey,
      handler: ({ principal }) => apiKeys.setGlobalState(principal, state),
    });
  return [
    defineRoute({
      method: 'GET', path: '/v1/account', operationId: 'getAccount', summary: 'The caller\'s account; also a credential check',
      scope: 'none', workspace: 'none', response: Account,
      handler: ({ principal }) => accounts.get(principal),
    }),
    defineRoute({
      method: 'POST', path: '/v1/account/rotate_webhook_signing_key', operationId: 'rotateWebhookSigningKey', summary: 'Rotate the webhook signing secret',
      scope: 'account:manage', admin: true, workspace: 'none', response: WebhookSigningKey,
      handler: ({ principal }) => accounts.rotateWebhookSigningKey(principal),
    }),
    defineRoute({
      method: 'GET', path: '/v1/profile', operationId: 'getProfile',
      summary: 'The calling principal\'s profile: its scopes, its workspaces and the API key it used (who am I)',
      scope: 'none', workspace: 'none', response: CallerProfile,
      handler: ({ principal }) => accounts.callerProfile(principal),
    }),
    defineRoute({
      method: 'GET', path: '/v1/account/global_api_key', operationId: 'getGlobalApiKey', summary: 'The global account key (without its token)',
      scope: 'account:manage', admin: true, workspace: 'none', response: ApiKey,
      handler: ({ principal }) => apiKeys.getGlobal(principal),
    }),
    defineRoute({
      method: 'PUT', path: '/v1/account/global_api_key/rotate', operationId: 'rotateGlobalApiKey', summary: 'Rotate the global key: a new token, every earlier token invalid',
      scope: 'account:manage', admin: true, workspace: 'none', response: ApiKey, body: Type.Optional(Type.Object({}, { additionalProperties: false })),
      handler: ({ principal }) => apiKeys.rotateGlobal(principal),
    }),
    globalKeyState(ApiKeyState.ENABLED, 'enable'),
    globalKeyState(ApiKeyState.DISABLED, 'disable'),
  ];
}
