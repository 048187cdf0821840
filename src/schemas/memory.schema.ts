// Wire shapes of the memory area: MemoryLayer, MemoryEntry, MemoryEntryDetail
// (spec 2.11, 2.12) and their request bodies (api-decisions.md "Memory").
import { Type, type Static } from '@sinclair/typebox';
import {
  CreateMetadata,
  DateTime,
  Description,
  ExternalId,
  Labels,
  Name,
  Profile,
  ResourceMetadata,
  Strict,
  UpdateBody,
} from './common.schema';
import { idPattern } from '../ids';

export const MemoryLayerTypeSchema = Type.Union([
  Type.Literal('MEMORY_LAYER_TYPE_UNSPECIFIED'),
  Type.Literal('MEMORY_LAYER_TYPE_EPISODIC'),
  Type.Literal('MEMORY_LAYER_TYPE_SKILLS'),
]);

export const MemoryLayer = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({
    type: MemoryLayerTypeSchema,
    description: Type.Optional(Type.String()),
    expiresAt: Type.Optional(DateTime),
    systemManaged: Type.Boolean(),
  }),
  info: Type.Optional(
    Type.Object({
      createdBy: Type.Optional(Profile),
      entryCount: Type.Optional(Type.Integer()),
      lastUsedAt: Type.Optional(DateTime),
    }),
  ),
});
export type MemoryLayer = Static<typeof MemoryLayer>;

export const CreateMemoryLayerBody = Strict({
  metadata: CreateMetadata,
  spec: Strict({ type: MemoryLayerTypeSchema, description: Type.Optional(Description) }),
});
export type CreateMemoryLayerBody = Static<typeof CreateMemoryLayerBody>;

export const UpdateMemoryLayerBody = UpdateBody(Strict({ type: Type.Optional(MemoryLayerTypeSchema), description: Type.Optional(Description) }));
export type UpdateMemoryLayerBody = Static<typeof UpdateMemoryLayerBody>;

export const MemoryEntrySpec = Type.Object({
  key: Type.String(),
  title: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
});

const EntryInfo = Type.Object({
  createdBy: Type.Optional(Profile),
  memoryLayer: Type.Optional(ResourceMetadata),
});

/** The entry list item: no body. */
export const MemoryEntry = Type.Object({
  metadata: ResourceMetadata,
  spec: MemoryEntrySpec,
  info: Type.Optional(EntryInfo),
});
export type MemoryEntry = Static<typeof MemoryEntry>;

/** Get, create and update of an entry: with `content`. */
export const MemoryEntryDetail = Type.Object({
  content: Type.String(),
  metadata: ResourceMetadata,
  spec: MemoryEntrySpec,
  info: Type.Optional(EntryInfo),
});
export type MemoryEntryDetail = Static<typeof MemoryEntryDetail>;

// Key and content are plain strings here: the domain checks the key rules and
// the 1 MiB content limit so that the messages name the rule (spec 2.12).
const EntryTitle = Type.String({ maxLength: 1024 });
const UploadId = Type.String({ pattern: idPattern('upload'), description: 'upload_ id of a COMPLETE upload' });
const EntryDescription = Description;

export const CreateMemoryEntryBody = Strict({
  metadata: Type.Optional(Strict({ name: Type.Optional(Name), externalId: Type.Optional(ExternalId), labels: Type.Optional(Labels) })),
  spec: Strict({
    key: Type.String(),
    content: Type.Optional(Type.String()),
    uploadId: Type.Optional(UploadId),
    title: Type.Optional(EntryTitle),
    description: Type.Optional(EntryDescription),
  }),
});
export type CreateMemoryEntryBody = Static<typeof CreateMemoryEntryBody>;

export const UpdateMemoryEntryBody = UpdateBody(
  Strict({
    key: Type.Optional(Type.String()),
    content: Type.Optional(Type.String()),
    uploadId: Type.Optional(UploadId),
    title: Type.Optional(EntryTitle),
    description: Type.Optional(EntryDescription),
  }),
);
export type UpdateMemoryEntryBody = Static<typeof UpdateMemoryEntryBody>;
