// The test actor kind: a counter. `add` returns the new value, so concurrent
// callers can check that every increment got a distinct value (no interleaving,
// no loss). Also exercises slow turns, reminders, outbox events, transactional
// sends and effects: `work` starts an effect that POSTs to an HTTP server with
// the effect id as Idempotency-Key and adds its answer when it returns.
import { request } from 'undici';
import { InvalidArgumentError } from '../../src/errors';
import type { ActorBehavior, ActorDecision, ActorKind } from '../../src/ports/actor-behavior';

export interface CounterState {
  value: number;
  reminded: string[];
  /** Outcome of each effect by id: `running`, `ok:<attempt>`, `failed:<code>`, `aborted`. */
  effects: Record<string, string>;
}

export type CounterCommand =
  | { type: 'add'; by: number }
  | { type: 'get' }
  | { type: 'slowAdd'; by: number; delayMs: number }
  | { type: 'remind'; name: string; inMs: number }
  | { type: 'cancelReminder'; name: string }
  | { type: 'emit'; count: number }
  /** Starts an effect: POST `url` (which answers `{add: n}`), or sleep `sleepMs` and add `by`. */
  | { type: 'work'; effectId?: string; url?: string; sleepMs?: number; by?: number; timeoutMs?: number }
  | { type: 'abortWork'; effectId: string }
  /** A transactional send of `add` commands to other counters, in order. */
  | { type: 'send'; to: string[]; by: number }
  | { type: 'fail' }
  /** Refused with INVALID_ARGUMENT naming the field `by`, with a cause. */
  | { type: 'refuse' };

export type CounterEvent =
  | { type: 'added'; by: number }
  | { type: 'reminded'; name: string }
  | { type: 'effect'; id: string; status: string };

export interface CounterReply {
  value: number;
  reminded: string[];
  effects: Record<string, string>;
}

/** Counts in this process, read by the in-process suites. */
export const counterEffects = { runs: 0, failedReminders: 0 };

/** Turns that started while another turn of the same actor was running in this process. */
export const counterOverlaps = { count: 0 };
const running = new Set<string>();

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

function reply(state: CounterState): CounterReply {
  return { value: state.value, reminded: state.reminded, effects: state.effects };
}

function added(state: CounterState, by: number): ActorDecision<CounterEvent, CounterReply> {
  return { events: [{ type: 'added', by }], reply: { ...reply(state), value: state.value + by } };
}

function startWork(state: CounterState, command: Extract<CounterCommand, { type: 'work' }>, actorId: string): ActorDecision<CounterEvent, CounterReply> {
  const id = command.effectId ?? `fx-${actorId}-${Object.keys(state.effects).length + 1}`;
  return {
    events: [{ type: 'effect', id, status: 'running' }],
    effects: { start: [{ id, name: command.url ? 'post' : 'sleep', input: { url: command.url, sleepMs: command.sleepMs ?? 0, by: command.by ?? 1 }, timeoutMs: command.timeoutMs ?? 60_000 }] },
    reply: { ...reply(state), effects: { ...state.effects, [id]: 'running' } },
  };
}

async function decide(state: CounterState, command: CounterCommand, id: string): Promise<ActorDecision<CounterEvent, CounterReply>> {
  switch (command.type) {
    case 'add':
      return added(state, command.by);
    case 'get':
      return { reply: reply(state) };
    case 'slowAdd':
      await sleep(command.delayMs);
      return added(state, command.by);
    case 'remind':
      return { reminders: { set: [{ name: command.name, dueAt: new Date(Date.now() + command.inMs), payload: { name: command.name } }] }, reply: reply(state) };
    case 'cancelReminder':
      return { reminders: { cancel: [command.name] }, reply: reply(state) };
    case 'emit':
      return { ...added(state, 0), publish: Array.from({ length: command.count }, (_, i) => ({ type: 'counter.emitted', data: { id, i } })) };
    case 'work':
      return startWork(state, command, id);
    case 'abortWork':
      return {
        events: [{ type: 'effect', id: command.effectId, status: 'aborted' }],
        effects: { abort: [command.effectId] },
        reply: { ...reply(state), effects: { ...state.effects, [command.effectId]: 'aborted' } },
      };
    case 'send':
      return { send: command.to.map((to) => ({ kind: 'counter', id: to, command: { type: 'add', by: command.by } })), reply: reply(state) };
    case 'fail':
      throw new Error('counter asked to fail');
    case 'refuse':
      throw new InvalidArgumentError('by: must be positive', [{ field: 'by', description: 'must be positive' }], { cause: new Error('the counter checked it') });
  }
}

/** The counter behaviour (kind `counter`). */
export const counterBehavior: ActorBehavior<CounterState, CounterCommand, CounterEvent, CounterReply> = {
  kind: 'counter',
  initialState: () => ({ value: 0, reminded: [], effects: {} }),
  async decide(state, command, context) {
    if (running.has(context.id)) counterOverlaps.count++;
    running.add(context.id);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      return await decide(state, command, context.id);
    } finally {
      running.delete(context.id);
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'added':
        return { ...state, value: state.value + event.by };
      case 'reminded':
        return { ...state, reminded: [...state.reminded, event.name] };
      case 'effect':
        return { ...state, effects: { ...state.effects, [event.id]: event.status } };
    }
  },
  onReminder(state, reminder) {
    if (reminder.name.startsWith('failing')) {
      counterEffects.failedReminders++;
      throw new Error(`reminder ${reminder.name} always fails`);
    }
    return { events: [{ type: 'reminded', name: reminder.name }] };
  },
  onEffectResult(state, outcome) {
    if (!outcome.ok) return { events: [{ type: 'effect', id: outcome.id, status: `failed:${outcome.error.code}` }] };
    const { add } = outcome.value as { add: number };
    return { events: [{ type: 'added', by: add }, { type: 'effect', id: outcome.id, status: `ok:${outcome.attempt}` }] };
  },
};

/** The counter kind with its effects: `post` (HTTP, Idempotency-Key = effect id) and `sleep`. */
export const counterKind: ActorKind = {
  behavior: counterBehavior,
  effects: {
    async post(input: { url: string; by: number }, context) {
      counterEffects.runs++;
      const response = await request(input.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': context.effectId, 'x-attempt': String(context.attempt) },
        body: JSON.stringify({ actorId: context.actorId, by: input.by }),
        signal: context.signal,
      });
      if (response.statusCode >= 300) throw new Error(`effect target answered ${response.statusCode}`);
      return (await response.body.json()) as { add: number };
    },
    async sleep(input: { sleepMs: number; by: number }, context) {
      counterEffects.runs++;
      await sleep(input.sleepMs, context.signal);
      return { add: input.by };
    },
  },
};
