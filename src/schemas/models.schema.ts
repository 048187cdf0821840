// Wire shapes of models (spec 2.10, 4.6): the workspace's copy of a catalog
// model, and the workspace models it adds itself (api-decisions.md
// "Extensions": served through one of its AI provider keys).
import { Type, type Static } from '@sinclair/typebox';
import { idPattern } from '../ids';
import { CreateMetadata, INT32_MAX, ResourceMetadata, Strict, UpdateBody, listParamProperties } from './common.schema';

export const ModelStatusSchema = Type.Union([
  Type.Literal('MODEL_STATUS_UNSPECIFIED'),
  Type.Literal('MODEL_STATUS_ENABLED'),
  Type.Literal('MODEL_STATUS_DISABLED'),
]);

export const ModelSourceSchema = Type.Union([
  Type.Literal('MODEL_SOURCE_UNSPECIFIED'),
  Type.Literal('MODEL_SOURCE_CATALOG'),
  Type.Literal('MODEL_SOURCE_WORKSPACE'),
], { description: 'MODEL_SOURCE_CATALOG: shipped with the service (read-only but for its status); MODEL_SOURCE_WORKSPACE: added by the workspace' });

const PRICE_DESCRIPTION = 'cents per million tokens as a decimal string ("0", "15", "3.8")';
const Price = (what: string) => Type.String({ maxLength: 32, description: `Cents per million ${what} tokens, a decimal string such as "0", "15" or "3.8"` });
const TokenCount = (description: string) => Type.Integer({ minimum: 1, maximum: INT32_MAX, description });
const AiProviderKeyId = Type.String({ pattern: idPattern('aiProviderKey'), description: 'The AI provider key (aipk_ id) of this workspace that serves the model' });
const UpstreamModel = Type.String({ minLength: 1, maxLength: 256, description: 'The model id sent to the provider (e.g. "qwen2.5:7b" for Ollama, "Qwen/Qwen2.5-7B-Instruct" for vLLM)' });

export const Model = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({
    family: Type.Optional(Type.String()),
    provider: Type.Optional(Type.String()),
    inputPricePerMillionTokens: Type.Optional(Type.String({ description: `Input ${PRICE_DESCRIPTION}` })),
    outputPricePerMillionTokens: Type.Optional(Type.String({ description: `Output ${PRICE_DESCRIPTION}` })),
    maxInputTokens: Type.Optional(Type.Integer()),
    maxOutputTokens: Type.Optional(Type.Integer()),
    status: Type.Optional(ModelStatusSchema),
    source: Type.Optional(ModelSourceSchema),
    aiProviderKeyId: Type.Optional(Type.String({ description: 'Workspace models only' })),
    upstreamModel: Type.Optional(Type.String({ description: 'Workspace models only' })),
  }),
});
export type Model = Static<typeof Model>;

export const ListModelsQuery = Strict({
  ...listParamProperties,
  prefix: Type.Optional(Type.String({ description: 'Model name (full id) prefix, e.g. "openai/"; an id prefix also matches' })),
  status: Type.Optional(ModelStatusSchema),
  source: Type.Optional(ModelSourceSchema),
});
export type ListModelsQuery = Static<typeof ListModelsQuery>;

export const SetModelStatusBody = Strict({ status: ModelStatusSchema });
export type SetModelStatusBody = Static<typeof SetModelStatusBody>;

export const CreateModelBody = Strict({
  metadata: CreateMetadata,
  spec: Strict({
    aiProviderKeyId: AiProviderKeyId,
    upstreamModel: UpstreamModel,
    maxInputTokens: TokenCount('The context window in tokens'),
    maxOutputTokens: Type.Optional(TokenCount('The longest completion in tokens; default maxInputTokens')),
    inputPricePerMillionTokens: Price('input'),
    outputPricePerMillionTokens: Price('output'),
  }),
}, { description: 'metadata.name is the model\'s full id family/model, unique in the workspace and no catalog model\'s' });
export type CreateModelBody = Static<typeof CreateModelBody>;

export const UpdateModelBody = UpdateBody(Strict({
  aiProviderKeyId: Type.Optional(AiProviderKeyId),
  upstreamModel: Type.Optional(UpstreamModel),
  maxInputTokens: Type.Optional(TokenCount('The context window in tokens')),
  maxOutputTokens: Type.Optional(TokenCount('The longest completion in tokens')),
  inputPricePerMillionTokens: Type.Optional(Price('input')),
  outputPricePerMillionTokens: Type.Optional(Price('output')),
}));
export type UpdateModelBody = Static<typeof UpdateModelBody>;
