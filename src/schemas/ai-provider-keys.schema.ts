// Wire shapes of AI provider keys (spec 2.9, 4.5). `spec.apiKey` is write-only:
// accepted on create and update, returned empty; a key with a baseUrl may omit it.
import { Type, type Static } from '@sinclair/typebox';
import { CreateMetadata, ResourceMetadata, Strict, UpdateBody } from './common.schema';

export const AiProviderSchema = Type.Union([Type.Literal('AI_PROVIDER_UNSPECIFIED'), Type.Literal('AI_PROVIDER_OPENROUTER')]);

// Not empty: AiProviderKeyService refuses "" itself, so the message can say to omit the field instead.
const ApiKeyValue = Type.String({ maxLength: 4096, description: 'Write-only; responses return it empty. Not empty; required unless openrouter.baseUrl is set (omit it for a server that needs no key)' });
const OpenRouterSettings = Strict({
  baseUrl: Type.Optional(Type.String({ maxLength: 2048, description: 'http(s) URL of an OpenRouter-compatible API; default https://openrouter.ai/api/v1' })),
});

export const AiProviderKey = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({
    apiKey: Type.String({ description: 'Always empty in responses' }),
    provider: AiProviderSchema,
    openrouter: Type.Optional(Type.Object({ baseUrl: Type.Optional(Type.String()) })),
  }),
  info: Type.Optional(
    Type.Object({
      enabledModelCount: Type.Optional(Type.Integer()),
      disabledModelCount: Type.Optional(Type.Integer()),
      isPromotional: Type.Optional(Type.Boolean()),
    }),
  ),
});
export type AiProviderKey = Static<typeof AiProviderKey>;

export const CreateAiProviderKeyBody = Strict({
  metadata: CreateMetadata,
  spec: Strict({ apiKey: Type.Optional(ApiKeyValue), provider: Type.Optional(AiProviderSchema), openrouter: Type.Optional(OpenRouterSettings) }),
});
export type CreateAiProviderKeyBody = Static<typeof CreateAiProviderKeyBody>;

export const UpdateAiProviderKeyBody = UpdateBody(Strict({ apiKey: Type.Optional(ApiKeyValue), provider: Type.Optional(AiProviderSchema), openrouter: Type.Optional(OpenRouterSettings) }));
export type UpdateAiProviderKeyBody = Static<typeof UpdateAiProviderKeyBody>;
