// The episodic memory sweeper's loop (actors/kinds/episodic-memory-sweeper.ts)
// over a fake store: batches until one comes back short, gives up at once when
// another node sweeps, joins a sweep in progress, and stop() waits for the
// batch running and starts no other.
import assert from 'node:assert/strict';
import { EpisodicMemorySweeper } from '../../actors/kinds/episodic-memory-sweeper';
import type { EpisodicSweepBatch } from '../../src/memory/episodic-memory';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A store answering the given batches in order (then empty ones), recording each call's limit. */
function fakeEpisodic(batches: EpisodicSweepBatch[]) {
  const limits: number[] = [];
  return {
    limits,
    async deleteExpired(limit: number) {
      limits.push(limit);
      return batches.shift() ?? { deleted: 0, busy: false };
    },
  };
}

describe('EpisodicMemorySweeper', () => {
  it('deletes batch after batch until one comes back short, and counts them', async () => {
    const episodic = fakeEpisodic([{ deleted: 3, busy: false }, { deleted: 3, busy: false }, { deleted: 1, busy: false }, { deleted: 3, busy: false }]);
    const sweeper = new EpisodicMemorySweeper({ episodic, intervalMs: 60_000, logger: silent, batchSize: 3 });
    assert.equal(await sweeper.sweepOnce(), 7);
    assert.deepEqual(episodic.limits, [3, 3, 3]);
  });

  it('ends the sweep when another node holds the lock', async () => {
    const episodic = fakeEpisodic([{ deleted: 3, busy: false }, { deleted: 0, busy: true }, { deleted: 3, busy: false }]);
    const sweeper = new EpisodicMemorySweeper({ episodic, intervalMs: 60_000, logger: silent, batchSize: 3 });
    assert.equal(await sweeper.sweepOnce(), 3);
    assert.equal(episodic.limits.length, 2);
  });

  it('joins a sweep in progress rather than starting a second one', async () => {
    const episodic = fakeEpisodic([{ deleted: 2, busy: false }]);
    const sweeper = new EpisodicMemorySweeper({ episodic, intervalMs: 60_000, logger: silent, batchSize: 5 });
    const [first, second] = await Promise.all([sweeper.sweepOnce(), sweeper.sweepOnce()]);
    assert.deepEqual([first, second], [2, 2]);
    assert.equal(episodic.limits.length, 1);
  });

  it('stops after the batch in progress', async () => {
    let release!: () => void;
    const calls: number[] = [];
    const episodic = {
      deleteExpired: (limit: number) => {
        calls.push(limit);
        return new Promise<EpisodicSweepBatch>((resolve) => (release = () => resolve({ deleted: limit, busy: false })));
      },
    };
    const sweeper = new EpisodicMemorySweeper({ episodic, intervalMs: 60_000, logger: silent, batchSize: 2 });
    const sweep = sweeper.sweepOnce();
    const stopped = sweeper.stop();
    release();
    await stopped;
    assert.equal(await sweep, 2);
    assert.equal(calls.length, 1, 'a full batch, but no next one after stop()');
  });

  it('sweeps on its interval once started, and no more once stopped', async () => {
    let sweeps = 0;
    let tick!: () => void;
    const ticked = new Promise<void>((resolve) => (tick = resolve));
    const episodic = { deleteExpired: async () => (sweeps++, tick(), { deleted: 0, busy: false }) };
    const sweeper = new EpisodicMemorySweeper({ episodic, intervalMs: 5, logger: silent });
    sweeper.start();
    await ticked;
    await sweeper.stop();
    const after = sweeps;
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(sweeps, after);
  });
});
