// Wire shapes of uploads (api-decisions.md "Tenants, subjects, uploads"): a
// short-lived signed URL the client PUTs bytes to, then `complete`.
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, ResourceMetadata, Strict } from './common.schema';

export const UploadStatusSchema = Type.Union([
  Type.Literal('UPLOAD_STATUS_UNSPECIFIED'),
  Type.Literal('UPLOAD_STATUS_PENDING'),
  Type.Literal('UPLOAD_STATUS_COMPLETE'),
  Type.Literal('UPLOAD_STATUS_CONSUMED'),
]);

export const Upload = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({
    filename: Type.String(),
    contentType: Type.String(),
    sizeBytes: Type.Integer(),
  }),
  info: Type.Object({
    status: UploadStatusSchema,
    uploadUrl: Type.Optional(Type.String({ description: 'Present while the upload is PENDING and its URL has not expired' })),
    uploadMethod: Type.Literal('PUT'),
    expiresAt: DateTime,
  }),
});
export type Upload = Static<typeof Upload>;

export const CreateUploadBody = Strict({
  filename: Type.String({ minLength: 1, maxLength: 255 }),
  contentType: Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(\\s*;.*)?$' }),
  sizeBytes: Type.Integer({ minimum: 0 }),
});
export type CreateUploadBody = Static<typeof CreateUploadBody>;

/** Query of the service's own signed PUT URL (local storage). */
export const SignedUploadQuery = Strict({
  expires: Type.Optional(Type.String({ maxLength: 20 })),
  signature: Type.Optional(Type.String({ maxLength: 128 })),
});
export type SignedUploadQuery = Static<typeof SignedUploadQuery>;
