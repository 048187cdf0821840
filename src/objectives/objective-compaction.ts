// Compaction (issue 25 item 4, spec 2.14 compactionConfig, 6.3-6.4): before
// each model call the prompt's size is estimated (the provider's reported
// prompt tokens of the last call plus about a token per 4 characters of what
// was added since; the whole request after a compaction or without reported
// usage), and above `triggerThreshold` x the model's `maxInputTokens` it is
// brought down in three steps: (1) tool results older than the newest
// `preserveRecentResults` become `[result cleared]`; (2) if still above, the
// model summarizes what precedes the tail (the latest assistant tool-call
// message with its results and any user message after them) as the
// `model.summarize` effect, and a new context window starts with the summary
// as its first (user) message, then the tail; (3) when the summarizer fails,
// the oldest whole turns are dropped instead. A provider's context-length
// error forces steps 1 and 2 and one retry of the model call
// (objective-retries.ts). Every step is a journal event folded by
// objective-state.ts, so replay rebuilds the same conversation; the summary
// request, like a model call's, is rebuilt from the state. Nothing here does I/O.
import type { ModelRecord } from '../models/records';
import { DEFAULT_PRESERVE_RECENT_RESULTS, DEFAULT_TRIGGER_THRESHOLD, type VariationRecord } from '../agents/records';
import { ModelCallErrorType, modelCallFailureOf } from '../models/model-call-error';
import { tokensForCharacters } from '../models/model-usage';
import { newId } from '../ids';
import type { EffectOutcome, EffectRequest } from '../ports/actor-behavior';
import type { ChatMessage, ChatRequest, ChatResponse } from './chat-model-types';
import { modelBudgetExceeded } from './objective-budgets';
import { DEFAULT_MODEL_CALL_TIMEOUT_MS, failObjective, modelCallEffect, systemPromptAndTools } from './objective-loop';
import { RESULT_CLEARED, type ObjectiveCompaction, type ObjectiveError, type ObjectiveStart, type ObjectiveState, type ObjectiveUsage } from './objective-state';
import type { ObjectiveTurn } from './objective-turn';

export const MODEL_SUMMARIZE_EFFECT = 'model.summarize';

export const COMPACTION_STRATEGY = {
  TOOL_RESULT_CLEARING: 'tool_result_clearing',
  SUMMARIZATION: 'summarization',
  DROP_OLDEST_TURNS: 'drop_oldest_turns',
} as const;

/** The summarization prompt when the variation sets no `summarization.instructions`. */
export const DEFAULT_SUMMARIZATION_INSTRUCTIONS = [
  'Summarize the conversation above so that the work can go on from your summary alone.',
  'Keep the task and its constraints, what has been done so far (the tool calls and what they returned that still matters),',
  'the decisions taken and what remains to do. Answer with the summary only.',
].join(' ');

/** What the new window's first message says before the summary (`newContextWindow.previousWindowContinueInstructions`). */
export const CONTINUE_INSTRUCTIONS = 'The conversation so far was compacted into the summary below; continue the task from where it stands.';

/**
 * The `compaction` of a new objective's start: the variation's settings and
 * its model's window (ObjectiveService.resolve); none for a model without one.
 */
export function compactionOf(
  variation: Pick<VariationRecord, 'modelId' | 'triggerThreshold' | 'preserveRecentResults' | 'summarizationInstructions'>,
  models: readonly ModelRecord[],
): Pick<ObjectiveStart, 'compaction'> {
  const model = models.find((candidate) => candidate.name === variation.modelId);
  if (!model || !(model.maxInputTokens > 0)) return {};
  const compaction: ObjectiveCompaction = {
    maxInputTokens: model.maxInputTokens,
    triggerThreshold: variation.triggerThreshold ?? DEFAULT_TRIGGER_THRESHOLD,
    preserveRecentResults: variation.preserveRecentResults ?? DEFAULT_PRESERVE_RECENT_RESULTS,
    ...(variation.summarizationInstructions ? { summarizationInstructions: variation.summarizationInstructions } : {}),
  };
  return { compaction };
}

/** Tokens above which the prompt is compacted. */
export function thresholdTokensOf(compaction: ObjectiveCompaction): number {
  return Math.floor(compaction.triggerThreshold * compaction.maxInputTokens);
}

/** The characters of one message as a model reads it: its text, and its tool calls' names and arguments. */
export function messageCharacters(message: ChatMessage): number {
  let characters = message.content?.length ?? 0;
  if (message.role === 'assistant' && message.toolCalls) {
    for (const call of message.toolCalls) characters += call.name.length + call.arguments.length;
  }
  return characters;
}

function charactersFrom(messages: readonly ChatMessage[], from = 0, to = messages.length): number {
  let characters = 0;
  for (let index = from; index < to; index++) characters += messageCharacters(messages[index]);
  return characters;
}

/** The characters of everything a request sends besides the conversation: the system prompt and the tool definitions. */
export function fixedCharactersOf(state: ObjectiveState): number {
  const { systemPrompt, tools } = systemPromptAndTools(state);
  return (systemPrompt?.length ?? 0) + (tools.length ? JSON.stringify(tools).length : 0);
}

/** The whole next request's tokens, estimated: system prompt, tool definitions and conversation. */
export function wholeRequestTokens(state: ObjectiveState): number {
  return tokensForCharacters(fixedCharactersOf(state) + charactersFrom(state.conversation));
}

/**
 * The next model call's prompt tokens: the last call's reported prompt plus
 * an estimate of the messages added since (a handful per turn, never the
 * whole conversation), else the whole request estimated.
 */
export function promptTokensEstimate(state: ObjectiveState): number {
  const base = state.promptBase;
  if (!base || base.messages > state.conversation.length) return wholeRequestTokens(state);
  return base.tokens + tokensForCharacters(charactersFrom(state.conversation, base.messages));
}

/**
 * Step 1: the tool messages to clear are those before `before`, the index of
 * the `preserve`-th newest tool message, and never in the tail (results the
 * model has not read yet); `count` of them are not cleared yet, the first of
 * those at `from`. Cleared results are always the oldest ones, so the newly
 * cleared are exactly the tool messages in [from, before).
 */
export function clearingOf(conversation: readonly ChatMessage[], preserve: number): { before: number; count: number; from: number } {
  let before = tailStartOf(conversation);
  let kept = 0;
  for (let index = conversation.length - 1; index >= 0 && kept < preserve; index--) {
    if (conversation[index].role === 'tool') {
      kept += 1;
      before = Math.min(before, index);
    }
  }
  if (kept < preserve) return { before: 0, count: 0, from: 0 };
  let count = 0;
  let from = before;
  for (let index = 0; index < before; index++) {
    const message = conversation[index];
    if (message.role === 'tool' && message.content !== RESULT_CLEARED) {
      if (count === 0) from = index;
      count += 1;
    }
  }
  return { before, count, from };
}

/** The tool messages in [from, to). */
function toolMessagesBetween(conversation: readonly ChatMessage[], from: number, to: number): number {
  let count = 0;
  for (let index = Math.max(0, from); index < Math.min(to, conversation.length); index++) if (conversation[index].role === 'tool') count += 1;
  return count;
}

/**
 * Where the tail starts: the latest assistant message when it called tools
 * (it, its results and the user messages after them stay together, so no
 * tool message is ever without its call), else the messages after the latest
 * assistant message (user messages waiting for an answer); 0 without one.
 */
export function tailStartOf(conversation: readonly ChatMessage[]): number {
  for (let index = conversation.length - 1; index >= 0; index--) {
    const message = conversation[index];
    if (message.role === 'assistant') return message.toolCalls?.length ? index : index + 1;
  }
  return 0;
}

/**
 * Step 3, the summarizer's fallback: whole turns (a user message, or an
 * assistant message with its tool results) are dropped oldest first, between
 * the window's first message (the task or the previous summary, kept when it
 * is a user message) and the tail, until the estimate is at most
 * `thresholdTokens` or nothing is left to drop. `keepFrom` is the first
 * message kept after the first one; `dropped` counts the messages dropped.
 */
export function dropOldestTurns(
  conversation: readonly ChatMessage[], tailStart: number, fixedCharacters: number, thresholdTokens: number,
): { keepFirst: boolean; keepFrom: number; dropped: number } {
  const keepFirst = tailStart > 0 && conversation[0]?.role === 'user';
  const start = keepFirst ? 1 : 0;
  let characters = fixedCharacters + charactersFrom(conversation);
  let keepFrom = start;
  while (keepFrom < tailStart && tokensForCharacters(characters) > thresholdTokens) {
    let next = keepFrom + 1;
    while (next < tailStart && conversation[next].role === 'tool') next += 1;
    characters -= charactersFrom(conversation, keepFrom, next);
    keepFrom = next;
  }
  return { keepFirst, keepFrom, dropped: keepFrom - start };
}

/** The summarization request of the state's conversation: everything before the tail, then the instructions. */
export function summarizationRequestOf(state: ObjectiveState): ChatRequest {
  const config = state.config!;
  const { systemPrompt, tools } = systemPromptAndTools(state);
  const head = state.conversation.slice(0, tailStartOf(state.conversation));
  const instructions = config.compaction?.summarizationInstructions ?? DEFAULT_SUMMARIZATION_INSTRUCTIONS;
  return {
    model: config.modelId,
    messages: [...(systemPrompt ? [{ role: 'system' as const, content: systemPrompt }] : []), ...head, { role: 'user', content: instructions }],
    // Offered as in the conversation (some providers refuse tool calls in messages without them), never to be called.
    tools,
    ...(tools.length ? { toolChoice: 'none' as const } : {}),
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    purpose: 'summarization',
  };
}

/** What the `model.summarize` effect gets in the journal (its request is the run's transient input, as a model call's). */
export interface SummarizeEffectInput {
  workspaceId: string;
}

export function summarizeEffect(state: ObjectiveState, effectId: string): EffectRequest {
  const config = state.config!;
  return {
    id: effectId,
    name: MODEL_SUMMARIZE_EFFECT,
    input: { workspaceId: config.workspaceId } satisfies SummarizeEffectInput,
    transientInput: summarizationRequestOf(state),
    timeoutMs: config.modelCallTimeoutMs ?? DEFAULT_MODEL_CALL_TIMEOUT_MS,
    // The summary is journaled by the turn that applies it; a lost node summarizes again.
    durableResult: false,
  };
}

/** One summarization per model call: its id follows the call's. */
export function summarizeEffectId(modelTurn: number): string {
  return `summarize_${modelTurn}`;
}

interface CompactedFields {
  messagesCompacted: number;
  strategies: string[];
  summary?: string;
  summarizationError?: ObjectiveError;
  usage?: ObjectiveUsage;
}

function recordCompacted(turn: ObjectiveTurn, fields: CompactedFields, newWindow: { completionTokens: number; continueInstructions?: string } | null): void {
  const { state } = turn;
  turn.record('CONTEXT_WINDOW_COMPACTED', {
    ...fields,
    ...(newWindow && state.contextWindow
      ? {
        newContextWindow: {
          objectiveId: state.objectiveId,
          sequence: state.contextWindow.sequence,
          promptTokens: wholeRequestTokens(state),
          completionTokens: newWindow.completionTokens,
          ...(newWindow.continueInstructions ? { previousWindowContinueInstructions: newWindow.continueInstructions } : {}),
        },
      }
      : {}),
  });
}

/**
 * Runs before the model call the turn just started (`model_call_started`
 * applied): compacts when the estimate is above the threshold, or always
 * when `forced` (the provider refused the context). Returns true when a
 * summarization now runs: the model call starts once it ends (acceptSummary).
 */
export function compactBeforeModelCall(turn: ObjectiveTurn, forced: boolean): boolean {
  const compaction = turn.config.compaction;
  if (!compaction) return false;
  const threshold = thresholdTokensOf(compaction);
  if (!forced && promptTokensEstimate(turn.state) <= threshold) return false;
  const { before, count, from } = clearingOf(turn.state.conversation, compaction.preserveRecentResults);
  if (count > 0) turn.apply({ type: 'tool_results_cleared', before });
  const clearedOnly = () => {
    if (count > 0) recordCompacted(turn, { messagesCompacted: count, strategies: [COMPACTION_STRATEGY.TOOL_RESULT_CLEARING] }, null);
    return false;
  };
  // The estimate after clearing keeps the provider's count, less what clearing removed (promptBase follows the clearing).
  if (!forced && promptTokensEstimate(turn.state) <= threshold) return clearedOnly();
  const tailStart = tailStartOf(turn.state.conversation);
  // Nothing before the tail, or only the window's first message (a summary would only restate it): the call goes as it is.
  if (tailStart === 0 || (tailStart === 1 && !forced)) return clearedOnly();
  // Even without everything before the tail the prompt would stay above (the system prompt, the tools or the tail are
  // that large): a summary cannot help, and one per model call would double the cost. The provider's refusal forces one.
  if (!forced && promptTokensEstimate(turn.state) - tokensForCharacters(charactersFrom(turn.state.conversation, 0, tailStart)) > threshold) return clearedOnly();
  const effectId = summarizeEffectId(turn.state.modelTurn);
  turn.apply({ type: 'summarization_started', effectId, cleared: count, forced, ...(count > 0 ? { clearedFrom: from, clearedBefore: before } : {}) });
  turn.startEffect(summarizeEffect(turn.state, effectId));
  return true;
}

/** The summary in a `model.summarize` outcome, or why there is none (as an ERROR event's `message` and `type`). */
function summaryOf(outcome: EffectOutcome): { summary: string; usage?: ObjectiveUsage } | { problem: ObjectiveError; usage?: ObjectiveUsage } {
  if (!outcome.ok) {
    const failure = modelCallFailureOf(outcome.error);
    return { problem: { message: failure.message, type: failure.type }, ...(failure.usage ? { usage: failure.usage } : {}) };
  }
  const response = (typeof outcome.value === 'object' && outcome.value !== null ? outcome.value : {}) as Partial<ChatResponse>;
  const usage = response.usage
    ? { usage: { promptTokens: response.usage.promptTokens, completionTokens: response.usage.completionTokens, costCents: response.usage.costCents } }
    : {};
  const summary = typeof response.content === 'string' ? response.content.trim() : '';
  return summary ? { summary, ...usage } : { problem: { message: 'the summarizer answered no text', type: ModelCallErrorType.PROVIDER_ERROR }, ...usage };
}

/**
 * The `model.summarize` outcome: its usage joins the objective's; a summary
 * opens a new window (the summary, then the tail); a failure or an empty
 * answer drops the oldest turns instead. The CONTEXT_WINDOW_COMPACTED event
 * follows, then the waiting model call starts (unless the summarizer's usage
 * used up a budget).
 */
export function acceptSummary(turn: ObjectiveTurn, outcome: EffectOutcome): void {
  const pending = turn.state.summarizing;
  if (!pending || outcome.id !== pending.effectId || !turn.state.modelCallEffectId) return;
  const compaction = turn.config.compaction!;
  const result = summaryOf(outcome);
  if (result.usage) turn.apply({ type: 'usage_added', usage: result.usage });
  const strategies: string[] = pending.cleared > 0 ? [COMPACTION_STRATEGY.TOOL_RESULT_CLEARING] : [];
  const { conversation } = turn.state;
  const tailStart = tailStartOf(conversation);
  const sequence = (turn.state.contextWindow?.sequence ?? 1) + 1;
  const usage = result.usage ? { usage: result.usage } : {};
  if ('summary' in result) {
    const firstMessage = `${CONTINUE_INSTRUCTIONS}\n\n${result.summary}`;
    turn.apply({ type: 'context_window_opened', contextWindowId: newId('contextWindow'), sequence, firstMessage, keepFrom: tailStart });
    strategies.push(COMPACTION_STRATEGY.SUMMARIZATION);
    recordCompacted(
      turn,
      // Everything before the tail is summarized, the results just cleared with it.
      { messagesCompacted: tailStart, strategies, summary: result.summary, ...usage },
      { completionTokens: result.usage?.completionTokens ?? 0, continueInstructions: CONTINUE_INSTRUCTIONS },
    );
  } else {
    const drop = dropOldestTurns(conversation, tailStart, fixedCharactersOf(turn.state), thresholdTokensOf(compaction));
    // A result cleared now and then dropped counts once.
    const clearedKept = pending.clearedBefore === undefined
      ? pending.cleared
      : toolMessagesBetween(conversation, Math.max(pending.clearedFrom ?? 0, drop.dropped > 0 ? drop.keepFrom : 0), pending.clearedBefore);
    if (drop.dropped > 0) {
      turn.apply({ type: 'context_window_opened', contextWindowId: newId('contextWindow'), sequence, keepFirst: drop.keepFirst, keepFrom: drop.keepFrom });
      strategies.push(COMPACTION_STRATEGY.DROP_OLDEST_TURNS);
    } else {
      turn.apply({ type: 'summarization_ended' });
    }
    recordCompacted(
      turn,
      { messagesCompacted: clearedKept + drop.dropped, strategies, summarizationError: result.problem, ...usage },
      drop.dropped > 0 ? { completionTokens: 0 } : null,
    );
  }
  const exceeded = modelBudgetExceeded(turn.state);
  if (exceeded) return failObjective(turn, exceeded);
  turn.startEffect(modelCallEffect(turn.state, turn.state.modelCallEffectId!));
}
