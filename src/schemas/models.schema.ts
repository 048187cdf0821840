// Wire shapes of models (spec 2.10, 4.6): the workspace's copy of a catalog model.
import { Type, type Static } from '@sinclair/typebox';
import { ResourceMetadata, Strict, listParamProperties } from './common.schema';

export const ModelStatusSchema = Type.Union([
  Type.Literal('MODEL_STATUS_UNSPECIFIED'),
  Type.Literal('MODEL_STATUS_ENABLED'),
  Type.Literal('MODEL_STATUS_DISABLED'),
]);

export const Model = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({
    family: Type.Optional(Type.String()),
    provider: Type.Optional(Type.String()),
    inputPricePerMillionTokens: Type.Optional(Type.String({ description: 'Cents per million input tokens' })),
    outputPricePerMillionTokens: Type.Optional(Type.String({ description: 'Cents per million output tokens' })),
    maxInputTokens: Type.Optional(Type.Integer()),
    maxOutputTokens: Type.Optional(Type.Integer()),
    status: Type.Optional(ModelStatusSchema),
  }),
});
export type Model = Static<typeof Model>;

export const ListModelsQuery = Strict({
  ...listParamProperties,
  prefix: Type.Optional(Type.String({ description: 'Model name (full id) prefix, e.g. "openai/"; an id prefix also matches' })),
  status: Type.Optional(ModelStatusSchema),
});
export type ListModelsQuery = Static<typeof ListModelsQuery>;

export const SetModelStatusBody = Strict({ status: ModelStatusSchema });
export type SetModelStatusBody = Static<typeof SetModelStatusBody>;
