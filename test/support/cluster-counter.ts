// The test actor kind: a counter. `add` returns the new value, so concurrent
// callers can check that every increment got a distinct value (no interleaving,
// no loss). Also exercises slow turns, reminders, outbox events and effects.
import type { ActorBehavior, ActorDecision } from '../../src/ports/actor-behavior';

export interface CounterState {
  value: number;
  reminded: string[];
}

export type CounterCommand =
  | { type: 'add'; by: number }
  | { type: 'get' }
  | { type: 'slowAdd'; by: number; delayMs: number }
  | { type: 'remind'; name: string; inMs: number }
  | { type: 'emit'; count: number }
  | { type: 'effect'; by: number }
  | { type: 'fail' };

export type CounterEvent = { type: 'added'; by: number } | { type: 'reminded'; name: string };

export interface CounterReply {
  value: number;
  reminded: string[];
}

/** Counts afterCommit runs in this process (they must not run again on replay). */
export const counterEffects = { runs: 0, failedReminders: 0 };

/** Turns that started while another turn of the same actor was running in this process. */
export const counterOverlaps = { count: 0 };
const running = new Set<string>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function reply(state: CounterState): CounterReply {
  return { value: state.value, reminded: state.reminded };
}

function added(state: CounterState, by: number): ActorDecision<CounterEvent, CounterReply> {
  return { events: [{ type: 'added', by }], reply: { ...reply(state), value: state.value + by } };
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
    case 'emit':
      return { ...added(state, 0), publish: Array.from({ length: command.count }, (_, i) => ({ type: 'counter.emitted', data: { id, i } })) };
    case 'effect':
      return { ...added(state, command.by), afterCommit: async () => void counterEffects.runs++ };
    case 'fail':
      throw new Error('counter asked to fail');
  }
}

/** The counter behaviour (kind `counter`). */
export const counterBehavior: ActorBehavior<CounterState, CounterCommand, CounterEvent, CounterReply> = {
  kind: 'counter',
  initialState: () => ({ value: 0, reminded: [] }),
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
    if (event.type === 'added') return { ...state, value: state.value + event.by };
    return { ...state, reminded: [...state.reminded, event.name] };
  },
  onReminder(state, reminder) {
    if (reminder.name.startsWith('failing')) {
      counterEffects.failedReminders++;
      throw new Error(`reminder ${reminder.name} always fails`);
    }
    return { events: [{ type: 'reminded', name: reminder.name }] };
  },
};
