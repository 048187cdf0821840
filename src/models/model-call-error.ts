// Why a model call failed, as a type a user can act on (the objective ERROR
// event's `type`), and whether trying again may help. Messages never hold a
// provider key: the client redacts it from anything a provider sends back.
import { ApiError, type StatusCode } from '../errors';
import type { EffectError } from '../ports/actor-behavior';

export const ModelCallErrorType = {
  /** The workspace has no AI provider key for the model's provider: add one. */
  NO_PROVIDER_KEY: 'NO_PROVIDER_KEY',
  /** The provider refused the key (HTTP 401, or 403 other than moderation): replace it. */
  PROVIDER_KEY_REFUSED: 'PROVIDER_KEY_REFUSED',
  /** The key's credits or spending limit are used up (HTTP 402). */
  INSUFFICIENT_CREDITS: 'INSUFFICIENT_CREDITS',
  /** The key's `baseUrl` points where the outbound URL policy forbids (private, loopback, metadata). */
  BASE_URL_REFUSED: 'BASE_URL_REFUSED',
  /** The provider does not know the model id (or no builtin model has it): choose another model. */
  MODEL_NOT_FOUND: 'MODEL_NOT_FOUND',
  /** No provider of the model supports tool calling: choose another model or remove the tools. */
  TOOLS_UNSUPPORTED: 'TOOLS_UNSUPPORTED',
  /** The conversation is longer than the model's context window. */
  CONTEXT_TOO_LONG: 'CONTEXT_TOO_LONG',
  /** The provider's moderation refused the input (HTTP 403 with moderation reasons). */
  CONTENT_REFUSED: 'CONTENT_REFUSED',
  /** The provider refused the request as malformed (another HTTP 400). */
  INVALID_REQUEST: 'INVALID_REQUEST',
  /** HTTP 429 past the retry budget; `retryAfterMs` says when the provider allows the next call. */
  RATE_LIMITED: 'RATE_LIMITED',
  /** No answer before the call's deadline (or the provider's own 408/504 after retries). */
  TIMED_OUT: 'TIMED_OUT',
  /** The provider could not be reached or is down (connection errors, 500, 502, 503) after retries. */
  PROVIDER_UNAVAILABLE: 'PROVIDER_UNAVAILABLE',
  /** The provider answered something unusable, or an error it did not explain. */
  PROVIDER_ERROR: 'PROVIDER_ERROR',
  /** The caller's signal aborted the call (objective cancelled, node stopping). */
  CANCELLED: 'CANCELLED',
  /** builtin/scripted ran a `FAIL <message>` line. */
  SCRIPT_FAILED: 'SCRIPT_FAILED',
  /** builtin/scripted found a directive it cannot run (`SLEEP soon`, `CALL` without a tool name). */
  SCRIPT_INVALID: 'SCRIPT_INVALID',
} as const;
export type ModelCallErrorType = (typeof ModelCallErrorType)[keyof typeof ModelCallErrorType];

/** The gRPC code each type travels under (an effect failure keeps an ApiError's code and details). */
const STATUS_CODE: Record<ModelCallErrorType, StatusCode> = {
  NO_PROVIDER_KEY: 'FAILED_PRECONDITION',
  PROVIDER_KEY_REFUSED: 'FAILED_PRECONDITION',
  INSUFFICIENT_CREDITS: 'FAILED_PRECONDITION',
  BASE_URL_REFUSED: 'FAILED_PRECONDITION',
  MODEL_NOT_FOUND: 'FAILED_PRECONDITION',
  TOOLS_UNSUPPORTED: 'FAILED_PRECONDITION',
  CONTEXT_TOO_LONG: 'OUT_OF_RANGE',
  CONTENT_REFUSED: 'FAILED_PRECONDITION',
  INVALID_REQUEST: 'INVALID_ARGUMENT',
  RATE_LIMITED: 'RESOURCE_EXHAUSTED',
  TIMED_OUT: 'DEADLINE_EXCEEDED',
  PROVIDER_UNAVAILABLE: 'UNAVAILABLE',
  PROVIDER_ERROR: 'UNKNOWN',
  CANCELLED: 'CANCELLED',
  SCRIPT_FAILED: 'ABORTED',
  SCRIPT_INVALID: 'INVALID_ARGUMENT',
};

export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
/** The `domain` of the ErrorInfo detail a ModelCallError carries. */
export const MODEL_CALL_ERROR_DOMAIN = 'models.agentrt';

export interface ModelCallErrorOptions {
  /** Whether the same call may succeed later. @default false */
  retryable?: boolean;
  /** How long the provider asked to wait (Retry-After). */
  retryAfterMs?: number;
  /** The HTTP status the provider answered, when there was one. */
  status?: number;
  /** What the failed call used, when the provider reported it (an error inside a 200 or a stream): it is still paid for. */
  usage?: FailedCallUsage;
}

/** Usage a failed call reported, as the objective counts it. */
export interface FailedCallUsage {
  promptTokens: number;
  completionTokens: number;
  costCents: number;
}

/**
 * A failed model call. `type` is what the objective ERROR event reports;
 * `code` is the gRPC code it travels under, and `details` holds a
 * google.rpc.ErrorInfo (`reason` = type), so the type survives the effect
 * runner, which keeps only code, message and details.
 */
export class ModelCallError extends ApiError {
  readonly type: ModelCallErrorType;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly status?: number;
  readonly usage?: FailedCallUsage;

  constructor(type: ModelCallErrorType, message: string, options: ModelCallErrorOptions = {}) {
    const retryable = options.retryable ?? false;
    const metadata: Record<string, string> = { retryable: String(retryable) };
    if (options.retryAfterMs !== undefined) metadata.retryAfterMs = String(options.retryAfterMs);
    if (options.status !== undefined) metadata.status = String(options.status);
    if (options.usage) {
      const { promptTokens, completionTokens, costCents } = options.usage;
      metadata.usage = JSON.stringify({ promptTokens, completionTokens, costCents });
    }
    super(STATUS_CODE[type], message, {
      details: [{ '@type': ERROR_INFO_TYPE, reason: type, domain: MODEL_CALL_ERROR_DOMAIN, metadata }],
      ...(options.retryAfterMs !== undefined ? { retryAfterSeconds: Math.ceil(options.retryAfterMs / 1000) } : {}),
    });
    this.name = 'ModelCallError';
    this.type = type;
    this.retryable = retryable;
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
    this.usage = options.usage;
  }

  /** The same error, with the usage the failed call reported. */
  withUsage(usage: FailedCallUsage | undefined): ModelCallError {
    if (!usage) return this;
    return new ModelCallError(this.type, this.message, {
      retryable: this.retryable, usage,
      ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
      ...(this.status !== undefined ? { status: this.status } : {}),
    });
  }
}

/** What a failed `model.call` effect tells of the provider's answer, read back from the EffectError. */
export interface ModelCallFailure {
  /** As modelCallErrorTypeOf. */
  type: string;
  message: string;
  /** Whether the same call may succeed later (ModelCallErrorOptions.retryable). */
  retryable: boolean;
  /** The provider's Retry-After, in milliseconds. */
  retryAfterMs?: number;
  /** The provider's HTTP status. */
  status?: number;
  /** What the failed call used, when the provider reported it. */
  usage?: FailedCallUsage;
}

function modelCallErrorInfo(error: EffectError): { reason: string; metadata: Record<string, unknown> } | undefined {
  for (const detail of error.details ?? []) {
    const info = detail as { '@type'?: unknown; domain?: unknown; reason?: unknown; metadata?: unknown };
    if (info['@type'] === ERROR_INFO_TYPE && info.domain === MODEL_CALL_ERROR_DOMAIN && typeof info.reason === 'string') {
      return { reason: info.reason, metadata: typeof info.metadata === 'object' && info.metadata !== null ? info.metadata as Record<string, unknown> : {} };
    }
  }
  return undefined;
}

function usageIn(text: unknown): FailedCallUsage | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const usage = JSON.parse(text) as Partial<FailedCallUsage>;
    const valid = [usage.promptTokens, usage.completionTokens, usage.costCents].every((value) => typeof value === 'number' && Number.isFinite(value) && value >= 0);
    return valid ? { promptTokens: usage.promptTokens!, completionTokens: usage.completionTokens!, costCents: usage.costCents! } : undefined;
  } catch {
    return undefined;
  }
}

const finiteNumber = (value: unknown): number | undefined => {
  const number = typeof value === 'string' && value !== '' ? Number(value) : NaN;
  return Number.isFinite(number) ? number : undefined;
};

/**
 * The failure of a `model.call` effect as the objective decides on it: a
 * ModelCallError's type, retryability, Retry-After and status (carried in its
 * ErrorInfo detail, the part of an error that crosses the effect boundary). A
 * time-out is retryable (the provider may answer next time), and so is the
 * runtime's own deadline; so is a cancelled call, because an objective that
 * cancels its call never sees the outcome: one that reports was aborted by a
 * stopping node. Any other error without a ModelCallError detail is retryable
 * when its code says the service was unavailable.
 */
export function modelCallFailureOf(error: EffectError): ModelCallFailure {
  const info = modelCallErrorInfo(error);
  const type = info?.reason ?? (error.code === 'DEADLINE_EXCEEDED' ? ModelCallErrorType.TIMED_OUT : error.code);
  const retryAfterMs = finiteNumber(info?.metadata.retryAfterMs);
  const status = finiteNumber(info?.metadata.status);
  const usage = usageIn(info?.metadata.usage);
  const retryable = info
    ? info.metadata.retryable === 'true' || type === ModelCallErrorType.TIMED_OUT || type === ModelCallErrorType.CANCELLED
    : error.code === 'DEADLINE_EXCEEDED' || error.code === 'UNAVAILABLE' || error.code === 'CANCELLED';
  return {
    type,
    message: error.message,
    retryable,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(usage ? { usage } : {}),
  };
}

/**
 * The objective ERROR event's `type` for a failed `model.call` effect: the
 * ModelCallError type carried in its details; the runtime's own deadline
 * (DEADLINE_EXCEEDED, when it fires before the client's) is TIMED_OUT as
 * well, and any other failure keeps its code.
 */
export function modelCallErrorTypeOf(error: EffectError): string {
  return modelCallFailureOf(error).type;
}
