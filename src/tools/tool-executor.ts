// Runs the tool calls of an objective (issue 9 item 4) as a library the
// objective actor calls from an effect: arguments checked against the tool's
// inputSchema, secrets resolved, the HTTP or MCP call made under the tool's
// deadline and the effect's signal, and every way it can end turned into a
// ToolCallOutcome (JSON; a failure is an answer for the model, never a throw).
// Secret values stay inside a call: they are redacted from every outcome.
import { ApiError, FailedPreconditionError, type FieldViolation } from '../errors';
import type { Logger } from '../logger';
import { errorCodeIn, refusalIn } from '../network/error-chain';
import type { UrlPolicyOptions } from '../network/url-policy';
import type { McpToolCaller } from '../ports/mcp-tool-caller';
import type { SecretResolver } from '../ports/secret-resolver';
import {
  buildHttpToolRequest, checkSecretNames, GuardedAgents, HttpToolRequestError, secretNamesOfHttpTool, sendHttpToolRequest, type HttpToolRequest,
} from './http-tool-request';
import { flattenMcpResult } from './mcp-tool-result';
import { DEFAULT_TOOL_TIMEOUT_MS } from './records';
import { parseToolArguments } from './tool-arguments';
import { ToolErrorType, type ExecutableTool, type ToolCallFailure, type ToolCallOutcome } from './tool-call-outcome';
import { capText, redactCapped, redactSecrets, type CappedText } from './tool-result-text';

/** Time an effect should allow beyond the tool's own deadline, so the tool's TIMED_OUT outcome is recorded rather than the effect's. */
export const EFFECT_DEADLINE_MARGIN_MS = 5_000;
/** Calls of one batch in flight at once. */
export const DEFAULT_MAX_PARALLEL_CALLS = 16;
/** Characters of an MCP tool's error text repeated in the outcome's message. */
const MESSAGE_EXCERPT_CHARS = 500;
/** Why a tool reading secrets fails once its objective's widget session is gone. */
const SESSION_ENDED = 'the widget session of this objective has ended';

export interface ToolCallContext {
  /** The objective's workspace: its secrets are the ones `{{secrets.NAME}}` reads. */
  workspaceId: string;
  /** Per-session secret values (widget sessions), taking precedence over stored secrets. */
  sessionSecrets?: Readonly<Record<string, string>>;
  /** The objective's widget session has ended: a tool that reads `{{secrets.NAME}}` fails (SECRET_NOT_FOUND) rather than read the workspace's. */
  sessionEnded?: boolean;
}

export interface ToolCallRequest {
  tool: ExecutableTool;
  /**
   * The service's id for the call (unique across the service, never the model's own id, which providers reuse);
   * sent as `Idempotency-Key`, so a call run again after a crash is recognisable and no two calls share a key.
   */
  toolCallId: string;
  /** As the model gave them: a JSON string or an object (empty or absent means `{}`). */
  arguments: unknown;
  context: ToolCallContext;
  /** The effect's signal: aborting it ends the call with CANCELLED (or TIMED_OUT once `deadline` passed). */
  signal?: AbortSignal;
  /** The effect's deadline; the call ends at the earlier of it and the tool's `timeoutMs`. */
  deadline?: Date;
}

export interface ToolExecutorDependencies {
  secrets: SecretResolver;
  mcp: McpToolCaller;
  /** The outbound URL policy (AGENTRT_ALLOW_PRIVATE_NETWORK), applied at connect time. */
  urlPolicy: UrlPolicyOptions;
  /** Where faults of the service itself are reported (never with a secret value). */
  logger?: Pick<Logger, 'error'>;
  /** @default DEFAULT_MAX_PARALLEL_CALLS */
  maxParallelCalls?: number;
}

/** The effect timeout that lets a tool use its whole `timeoutMs` and still report its own outcome. */
export function effectTimeoutMsFor(tool: Pick<ExecutableTool, 'httpTimeoutMs'>): number {
  return (tool.httpTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS) + EFFECT_DEADLINE_MARGIN_MS;
}

/** A failure decided before or while calling; `finish` turns it into an outcome. */
class ToolCallFailed extends Error {
  constructor(
    readonly errorType: ToolErrorType,
    message: string,
    readonly content: string,
    readonly extra: { status?: number; truncated?: boolean; fieldViolations?: FieldViolation[] } = {},
  ) {
    super(message);
    this.name = 'ToolCallFailed';
  }
}

interface CallResult extends CappedText {
  status?: number;
}

/** How a call ran out of time or was stopped, decided by which signal fired. */
interface CallWatch {
  signal: AbortSignal;
  timedOut(): boolean;
  cancelled(): boolean;
  budgetMs: number;
  dispose(): void;
}

function watchCall(timeoutMs: number, signal: AbortSignal | undefined, deadline: Date | undefined): CallWatch {
  const untilDeadline = deadline ? deadline.getTime() - Date.now() : Number.POSITIVE_INFINITY;
  const budgetMs = Math.max(0, Math.min(timeoutMs, untilDeadline));
  const timer = new AbortController();
  const handle = setTimeout(() => timer.abort(new Error(`deadline of ${budgetMs} ms passed`)), budgetMs);
  const combined = signal ? AbortSignal.any([timer.signal, signal]) : timer.signal;
  // The runtime aborts the effect's signal at its deadline too; an abort then is a time-out, not a cancel.
  const timedOut = () => timer.signal.aborted || (deadline !== undefined && Date.now() >= deadline.getTime());
  return {
    signal: combined,
    budgetMs,
    timedOut,
    cancelled: () => !timedOut() && signal?.aborted === true,
    dispose: () => clearTimeout(handle),
  };
}

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export class ToolExecutor {
  private readonly agents: GuardedAgents;

  constructor(private readonly dependencies: ToolExecutorDependencies) {
    this.agents = new GuardedAgents(dependencies.urlPolicy);
  }

  /**
   * Executes one tool call. Never throws: every failure, the service's own
   * included, is an outcome whose `content` goes back to the model.
   */
  async executeToolCall(call: ToolCallRequest): Promise<ToolCallOutcome> {
    const started = performance.now();
    const { tool } = call;
    const secrets = new Map<string, string>();
    let outcome: ToolCallOutcome;
    try {
      // Nothing is read or sent for a call whose effect was already stopped.
      if (call.signal?.aborted) throw new ToolCallFailed(ToolErrorType.CANCELLED, `tool "${tool.name}" was cancelled before it was called`, '[cancelled]');
      const parsed = parseToolArguments(call.arguments, tool.inputSchema);
      if (!parsed.ok) {
        const list = parsed.violations.map((violation) => `${violation.field}: ${violation.description}`).join('; ');
        throw new ToolCallFailed(ToolErrorType.INVALID_ARGUMENTS, `invalid arguments for tool "${tool.name}": ${list}`, `invalid arguments: ${list}`, {
          fieldViolations: parsed.violations,
        });
      }
      const result = tool.kind === 'mcp' ? await this.callMcp(call, parsed.value) : await this.callHttp(call, parsed.value, secrets);
      const content = redactCapped(result, secrets.values());
      outcome = { ok: true, toolCallId: call.toolCallId, toolId: tool.id, kind: tool.kind, content: content.text, truncated: content.truncated, ...(result.status !== undefined ? { status: result.status } : {}), durationMs: 0 };
    } catch (error) {
      outcome = this.failure(call, error, secrets);
    }
    outcome.durationMs = Math.round(performance.now() - started);
    return outcome;
  }

  /**
   * Executes the consecutive calls of one model turn in parallel (at most
   * `maxParallelCalls` at once); each gets its own outcome, in the calls' order.
   */
  async executeToolCalls(calls: readonly ToolCallRequest[]): Promise<ToolCallOutcome[]> {
    const outcomes: ToolCallOutcome[] = new Array(calls.length);
    let next = 0;
    const worker = async () => {
      while (next < calls.length) {
        const index = next++;
        outcomes[index] = await this.executeToolCall(calls[index]);
      }
    };
    const workers = Math.max(1, Math.min(this.dependencies.maxParallelCalls ?? DEFAULT_MAX_PARALLEL_CALLS, calls.length));
    await Promise.all(Array.from({ length: workers }, worker));
    return outcomes;
  }

  /** Closes the keep-alive connections of HTTP tools. */
  async close(): Promise<void> {
    await this.agents.close();
  }

  private async callHttp(call: ToolCallRequest, args: Record<string, unknown>, secrets: Map<string, string>): Promise<CallResult> {
    const { tool } = call;
    const method = tool.httpMethod ?? 'POST';
    // The stored URL (placeholders, not values) is what messages show.
    const target = `${method} ${tool.httpUrl}`;
    const timeoutMs = tool.httpTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    let request: HttpToolRequest;
    try {
      const names = secretNamesOfHttpTool(tool);
      checkSecretNames(names);
      if (names.length && call.context.sessionEnded) {
        throw new ToolCallFailed(ToolErrorType.SECRET_NOT_FOUND, `${target}: ${SESSION_ENDED}`, `tool error: ${SESSION_ENDED}`);
      }
      if (names.length) {
        for (const [name, value] of await this.dependencies.secrets.secretValues(call.context.workspaceId, names, call.context.sessionSecrets)) secrets.set(name, value);
      }
      request = buildHttpToolRequest(tool, args, call.toolCallId, secrets);
    } catch (error) {
      if (error instanceof HttpToolRequestError) {
        const type = error.reason === 'URL' ? ToolErrorType.URL_REFUSED : error.reason === 'SECRET_NAME' ? ToolErrorType.SECRET_NOT_FOUND : ToolErrorType.SECRET_UNUSABLE;
        throw new ToolCallFailed(type, `${target}: ${error.message}`, `tool error: ${error.message}`);
      }
      if (error instanceof FailedPreconditionError) throw new ToolCallFailed(ToolErrorType.SECRET_NOT_FOUND, `${target}: ${error.message}`, `tool error: ${error.message}`);
      throw error;
    }
    const watch = watchCall(timeoutMs, call.signal, call.deadline);
    try {
      if (watch.budgetMs === 0) throw new ToolCallFailed(ToolErrorType.TIMED_OUT, `${target}: no time was left before the deadline`, 'tool error: timed out before it could be called');
      const answer = await sendHttpToolRequest(this.agents.forTimeout(watch.budgetMs), request, watch.signal);
      if (answer.status >= 200 && answer.status < 300) {
        // An empty tool result confuses models (and some providers refuse one): say what happened.
        return answer.text === '' ? { ...answer, text: `(empty response, HTTP ${answer.status})` } : answer;
      }
      const redirect = answer.location !== undefined ? ` (redirect to ${answer.location}, not followed)` : '';
      const cut = redactCapped(capText(`HTTP ${answer.status}${redirect}${answer.text ? `\n${answer.text}` : ''}`), secrets.values());
      throw new ToolCallFailed(ToolErrorType.HTTP_ERROR, `${target} answered HTTP ${answer.status}${redirect}`, cut.text, { status: answer.status, truncated: answer.truncated || cut.truncated });
    } catch (error) {
      if (error instanceof ToolCallFailed) throw error;
      throw this.callError(error, watch, target, 'HTTP');
    } finally {
      watch.dispose();
    }
  }

  private async callMcp(call: ToolCallRequest, args: Record<string, unknown>): Promise<CallResult> {
    const { tool } = call;
    const target = `MCP tool "${tool.mcpToolName}" of ${tool.mcpServerUrl}`;
    const watch = watchCall(tool.httpTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS, call.signal, call.deadline);
    try {
      if (watch.budgetMs === 0) throw new ToolCallFailed(ToolErrorType.TIMED_OUT, `${target}: no time was left before the deadline`, 'tool error: timed out before it could be called');
      const result = await this.dependencies.mcp.callTool({
        serverUrl: tool.mcpServerUrl ?? '',
        toolName: tool.mcpToolName ?? '',
        arguments: args,
        idempotencyKey: call.toolCallId,
        signal: watch.signal,
        // The SDK's own timer is a backstop; ours decides (it knows TIMED_OUT from CANCELLED).
        timeoutMs: watch.budgetMs + 1_000,
      });
      const text = capText(flattenMcpResult(result));
      if (!result.isError) return text;
      const excerpt = text.text.length > MESSAGE_EXCERPT_CHARS ? `${text.text.slice(0, MESSAGE_EXCERPT_CHARS)}…` : text.text;
      throw new ToolCallFailed(ToolErrorType.MCP_TOOL_ERROR, `${target} reported an error: ${excerpt}`, text.text, { truncated: text.truncated });
    } catch (error) {
      if (error instanceof ToolCallFailed) throw error;
      throw this.callError(error, watch, target, 'MCP');
    } finally {
      watch.dispose();
    }
  }

  /** Classifies an error of the call itself: which signal fired first decides, then the error. */
  private callError(error: unknown, watch: CallWatch, target: string, protocol: 'HTTP' | 'MCP'): ToolCallFailed {
    if (watch.timedOut()) return new ToolCallFailed(ToolErrorType.TIMED_OUT, `${target} timed out after ${watch.budgetMs} ms`, `tool error: timed out after ${watch.budgetMs} ms`);
    if (watch.cancelled()) return new ToolCallFailed(ToolErrorType.CANCELLED, `${target} was cancelled`, '[cancelled]');
    const refusal = refusalIn(error);
    if (refusal) return new ToolCallFailed(ToolErrorType.URL_REFUSED, `${target}: ${refusal.message}`, `tool error: ${refusal.message}`);
    const code = errorCodeIn(error);
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || (error instanceof ApiError && error.code === 'DEADLINE_EXCEEDED')) {
      return new ToolCallFailed(ToolErrorType.TIMED_OUT, `${target}: ${reasonOf(error)}`, `tool error: timed out (${reasonOf(error)})`);
    }
    if (protocol === 'MCP') return new ToolCallFailed(ToolErrorType.MCP_ERROR, reasonOf(error), `tool error: ${reasonOf(error)}`);
    const reason = code && !reasonOf(error).includes(code) ? `${reasonOf(error)} (${code})` : reasonOf(error);
    return new ToolCallFailed(ToolErrorType.NETWORK_ERROR, `${target} could not be completed: ${reason}`, `tool error: could not reach the tool: ${reason}`);
  }

  /** The outcome of a failed call; secret values are redacted from its message and content. */
  private failure(call: ToolCallRequest, error: unknown, secrets: ReadonlyMap<string, string>): ToolCallFailure {
    const { tool, toolCallId } = call;
    const failed = error instanceof ToolCallFailed ? error : this.internal(call, error, secrets);
    const content = redactCapped({ text: failed.content, truncated: failed.extra.truncated ?? false }, secrets.values());
    return {
      ok: false,
      toolCallId,
      toolId: tool.id,
      kind: tool.kind,
      errorType: failed.errorType,
      message: redactSecrets(failed.message, secrets.values()),
      content: content.text,
      truncated: content.truncated,
      ...(failed.extra.status !== undefined ? { status: failed.extra.status } : {}),
      ...(failed.extra.fieldViolations ? { fieldViolations: failed.extra.fieldViolations } : {}),
      durationMs: 0,
    };
  }

  /** A fault of the service (a store down, a bug): logged with ids only, reported generically. */
  private internal(call: ToolCallRequest, error: unknown, secrets: ReadonlyMap<string, string>): ToolCallFailed {
    // Not the error object itself: its message or cause could hold a value this call resolved.
    const fault = { name: error instanceof Error ? error.name : typeof error, code: errorCodeIn(error), message: redactSecrets(reasonOf(error), secrets.values()) };
    this.dependencies.logger?.error({ fault, toolId: call.tool.id, toolCallId: call.toolCallId }, 'tool call failed inside the service');
    return new ToolCallFailed(ToolErrorType.INTERNAL, `tool "${call.tool.name}" could not be called: internal error`, 'tool error: internal error');
  }
}
