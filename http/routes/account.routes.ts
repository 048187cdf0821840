// Account (spec 4.1), the caller's profile, and the global key endpoints of
// api-decisions.md.
import { Type } from '@sinclair/typebox';
import type { AccountService } from '../../src/accounts/account.service';
import type { ApiKeyService } from '../../src/accounts/api-key.service';
import { ApiKeyState } from '../../src/accounts/records';
import type { FoundationStore } from '../../src/ports/foundation-store';
import { toProfile } from '../../src/accounts/mappers';
import { NotFoundError } from '../../src/errors';
import { Account, ApiKey, WebhookSigningKey } from '../../src/schemas/account.schema';
import { Profile } from '../../src/schemas/common.schema';
import { defineRoute, type RouteDefinition } from '../route';

export interface AccountRoutesDependencies {
  accounts: AccountService;
  apiKeys: ApiKeyService;
  store: FoundationStore;
}

export function accountRoutes({ accounts, apiKeys, store }: AccountRoutesDependencies): RouteDefinition[] {
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
      method: 'GET', path: '/v1/profile', operationId: 'getProfile', summary: 'The calling principal\'s profile',
      scope: 'none', workspace: 'none', response: Profile,
      handler: async ({ principal }) => {
        const profile = await store.profiles.findById(principal.profileId);
        if (!profile) throw NotFoundError.resource('profile', principal.profileId);
        return toProfile(profile);
      },
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
