// The reminder poller against an in-memory reminder table and shard host: a
// reminder due before the next poll is timed by the poller, and fires at its
// due time however long the poll's answer took to arrive (the database counts
// the wait from its statement, not from when the node read the answer).
import assert from 'node:assert/strict';
import { ReminderPoller } from '../../actors/runtime/reminder-poller';
import type { RuntimeLogger } from '../../actors/runtime/runtime-logger';
import type { ShardHost } from '../../actors/runtime/shard-host';
import type { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import type { ActorReminderRepository, DueReminder } from '../../persistence/runtime/actor-reminder.repository';

const silentLogger: RuntimeLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A poller whose reminder table answers `due` after `answerDelayMs`, and a host that records when each reminder arrives. */
function pollerWith(due: DueReminder[], answerDelayMs: number) {
  const delivered: Array<{ name: string; at: number }> = [];
  const reminders = {
    async listDue() {
      await sleep(answerDelayMs);
      return due;
    },
  } as unknown as ActorReminderRepository;
  const commands = { listActorsWithPending: async () => [] } as unknown as ActorCommandRepository;
  const host = {
    owned: () => [1],
    deliver(_kind: string, _id: string, _shard: number, message: { type: string; reminder?: { name: string } }) {
      if (message.type === 'reminder') delivered.push({ name: message.reminder!.name, at: performance.now() });
      return true;
    },
  } as unknown as ShardHost;
  const poller = new ReminderPoller({ reminders, commands, host, kinds: ['ledger'], pollMs: 60_000, logger: silentLogger });
  return { poller, delivered };
}

const reminder = (name: string, waitMs: number): DueReminder => ({
  kind: 'ledger', actorId: 'a1', name, shard: 1, dueAt: new Date(Date.now() + waitMs), payload: null, attempts: 0, waitMs,
});

/** How long after a poll the reminder was delivered, the database having counted `waitMs` and the answer taking `answerDelayMs`. */
async function firedAfterPoll(waitMs: number, answerDelayMs: number): Promise<number> {
  const { poller, delivered } = pollerWith([reminder('due', waitMs)], answerDelayMs);
  const askedAt = performance.now();
  poller.tick();
  while (delivered.length === 0) await sleep(5);
  await poller.stop();
  return delivered[0].at - askedAt;
}

describe('ReminderPoller', () => {
  it('fires a reminder at its due time, not the poll answer\'s delay later', async () => {
    // The database counted 400 ms from its statement; the answer took 300 ms to be read.
    const firedAfter = await firedAfterPoll(400, 300);
    // Counting the wait from the answer's arrival fires it about 700 ms after the poll.
    assert.ok(firedAfter >= 395 && firedAfter < 600, `fired ${firedAfter.toFixed(0)} ms after the poll, due 400 ms after it`);
  });

  it('delivers at once a reminder whose due time passed while the answer arrived', async () => {
    const firedAfter = await firedAfterPoll(50, 300);
    assert.ok(firedAfter >= 295 && firedAfter < 500, `fired ${firedAfter.toFixed(0)} ms after the poll, at the answer (300 ms)`);
  });
});
