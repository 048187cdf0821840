// Wire shapes of the usage roll-ups (issue 27 item 2, src/usage): the query
// of GET /v1/workspaces/{workspaceId}/usage and its answer.
import { Type, type Static } from '@sinclair/typebox';
import { USAGE_DIMENSIONS, type UsageDimension } from '../usage/usage-rollup';
import { DateTime, Strict, listParamProperties } from './common.schema';

/** An enum rather than a union of literals: a wrong value is told the values it may take. */
export const UsageGroupBy = Type.Unsafe<UsageDimension>({ type: 'string', enum: [...USAGE_DIMENSIONS], description: 'The dimension the sums are keyed by' });

export const UsageQuery = Strict({
  groupBy: UsageGroupBy,
  from: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339; rounded down to the hour. Default: `to` minus 30 days' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339, exclusive; rounded up to the hour. Default: now' })),
  cursor: listParamProperties.cursor,
  limit: Type.Optional(Type.Integer({ minimum: 1, description: 'Keys looked at per page; default 50, values above 1000 are clamped' })),
});
export type UsageQuery = Static<typeof UsageQuery>;

export const UsageItem = Type.Object({
  key: Type.Union([Type.String(), Type.Null()], { description: 'The agent, variation or tenant id, or the model; null: objectives without a tenant' }),
  promptTokens: Type.Integer(),
  completionTokens: Type.Integer(),
  costCents: Type.Number(),
  objectiveCount: Type.Integer({ description: 'Objectives created in the range' }),
});
export type UsageItem = Static<typeof UsageItem>;

export const UsageReport = Type.Object({
  groupBy: UsageGroupBy,
  /** The range read, rounded to whole hours. */
  from: DateTime,
  to: DateTime,
  items: Type.Array(UsageItem),
  pagination: Type.Object({ nextCursor: Type.String() }),
});
export type UsageReport = Static<typeof UsageReport>;
