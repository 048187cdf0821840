// Wire shapes of configuration bundles (api-decisions.md "Search and bundles"):
// the declarative document, the plan an apply answers, and the path and query
// parameters. The document embeds the same spec schemas the resource routes use.
import { Type, type Static } from '@sinclair/typebox';
import { AgentSpecInput, VariationSpecInput } from './agents.schema';
import { idPattern } from '../ids';
import { CreateMetadata, ExternalId, Labels, Name, Strict } from './common.schema';
import { MemoryLayerTypeSchema } from './memory.schema';
import { CreateScheduleBody } from './schedules.schema';
import { ToolSetSpecInput, ToolSpecInput } from './tools.schema';

export const BUNDLE_KEY_PATTERN = '^[a-z0-9][a-z0-9._-]{0,62}$';
const MAX_ITEMS = 1000;
const Names = Type.Array(Name, { maxItems: MAX_ITEMS });

/**
 * A schedule of the agent it is nested in, as POST .../agents/{agentId}/schedules
 * takes it; identified by `metadata.name` within its agent, like variations.
 */
export const BundleSchedule = Strict({ metadata: CreateMetadata, spec: CreateScheduleBody.properties.spec });
export type BundleSchedule = Static<typeof BundleSchedule>;

export const BundleTool = Strict({ metadata: CreateMetadata, spec: ToolSpecInput });
export type BundleTool = Static<typeof BundleTool>;

export const BundleToolSet = Strict({
  metadata: CreateMetadata,
  spec: Type.Optional(ToolSetSpecInput),
  tools: Type.Optional(Type.Array(Name, { maxItems: MAX_ITEMS, description: 'Tool names: the bundle\'s own, or else a unique tool of the workspace' })),
});
export type BundleToolSet = Static<typeof BundleToolSet>;

export const BundleMemoryEntry = Strict({
  metadata: Type.Optional(Strict({ name: Type.Optional(Name), externalId: Type.Optional(ExternalId), labels: Type.Optional(Labels) })),
  spec: Strict({
    key: Type.String({ minLength: 1, maxLength: 1024 }),
    content: Type.Optional(Type.String()),
    title: Type.Optional(Type.String({ maxLength: 1024 })),
    description: Type.Optional(Type.String({ maxLength: 4096 })),
  }),
});
export type BundleMemoryEntry = Static<typeof BundleMemoryEntry>;

export const BundleMemoryLayer = Strict({
  metadata: CreateMetadata,
  spec: Strict({ type: MemoryLayerTypeSchema, description: Type.Optional(Type.String({ maxLength: 4096 })) }),
  entries: Type.Optional(Type.Array(BundleMemoryEntry, { maxItems: MAX_ITEMS })),
});
export type BundleMemoryLayer = Static<typeof BundleMemoryLayer>;

export const BundleVariation = Strict({
  metadata: CreateMetadata,
  spec: Type.Optional(VariationSpecInput),
  tools: Type.Optional(Names),
  toolSets: Type.Optional(Names),
  subAgents: Type.Optional(Type.Array(Name, { maxItems: MAX_ITEMS, description: 'Agent names' })),
  memoryLayers: Type.Optional(Type.Array(Name, { maxItems: MAX_ITEMS, description: 'Memory layer names, top of the stack first' })),
});
export type BundleVariation = Static<typeof BundleVariation>;

export const BundleAgent = Strict({
  metadata: CreateMetadata,
  spec: Type.Optional(AgentSpecInput),
  variations: Type.Optional(Type.Array(BundleVariation, { maxItems: MAX_ITEMS })),
  schedules: Type.Optional(Type.Array(BundleSchedule, { maxItems: MAX_ITEMS, description: 'Applied through the schedule actors once the rest has committed' })),
});
export type BundleAgent = Static<typeof BundleAgent>;

export const BundleDocument = Strict({
  tools: Type.Optional(Type.Array(BundleTool, { maxItems: MAX_ITEMS })),
  toolSets: Type.Optional(Type.Array(BundleToolSet, { maxItems: MAX_ITEMS })),
  memoryLayers: Type.Optional(Type.Array(BundleMemoryLayer, { maxItems: MAX_ITEMS })),
  agents: Type.Optional(Type.Array(BundleAgent, { maxItems: MAX_ITEMS })),
  schedules: Type.Optional(Type.Array(Type.Unknown(), { description: 'Must be empty or absent: schedules belong to their agent (agents[].schedules)' })),
});
export type BundleDocument = Static<typeof BundleDocument>;

export const BundleResourceType = Type.Union(
  ['tool', 'toolSet', 'memoryLayer', 'memoryEntry', 'agent', 'variation', 'schedule'].map((type) => Type.Literal(type)),
);
export type BundleResourceType = 'tool' | 'toolSet' | 'memoryLayer' | 'memoryEntry' | 'agent' | 'variation' | 'schedule';

export const PlanItem = Type.Object({
  type: BundleResourceType,
  name: Type.String({ description: 'metadata.name; `agent/variation` for variations, `agent/schedule` for schedules, `layer/key` for memory entries' }),
  id: Type.Optional(Type.String({ description: 'Absent for resources a dry run would create' })),
});
export type PlanItem = Static<typeof PlanItem>;

export const BundlePlan = Type.Object({
  bundleKey: Type.String(),
  dryRun: Type.Boolean(),
  created: Type.Array(PlanItem),
  updated: Type.Array(PlanItem),
  deleted: Type.Array(PlanItem),
  unchanged: Type.Array(PlanItem),
});
export type BundlePlan = Static<typeof BundlePlan>;

export const BundlePath = Strict({
  workspaceId: Type.String({ pattern: idPattern('workspace') }),
  bundleKey: Type.String({ pattern: BUNDLE_KEY_PATTERN, description: 'Lower-case letters, digits, - _ . ; 1-63 characters' }),
});
export type BundlePath = Static<typeof BundlePath>;

export const ApplyBundleQuery = Strict({
  dryRun: Type.Optional(Type.Boolean({ description: 'Answer the plan and change nothing' })),
  adopt: Type.Optional(Type.Boolean({ description: 'Take over same-named resources owned by no bundle or another bundle' })),
});
export type ApplyBundleQuery = Static<typeof ApplyBundleQuery>;
