// What an event stream sends of the live feed (http/stream-live-inbox.ts):
// per model turn, deltas contiguous from offset 0 (a retry starts over at 0),
// none after the turn's ASSISTANT_MESSAGE, nothing of an answer joined in its
// middle or after a gap; waiting deltas merged; nudges; no deltas at all for
// a stream that did not ask.
import assert from 'node:assert/strict';
import { MAX_QUEUED_CHARS, StreamLiveInbox } from '../../http/stream-live-inbox';

const OBJECTIVE = 'obj_1';
const delta = (modelTurn: number, offset: number, text: string) => ({ type: 'delta' as const, objectiveId: OBJECTIVE, modelTurn, offset, text });

describe('StreamLiveInbox', () => {
  it('merges contiguous deltas that wait, and starts a new frame for a new turn', () => {
    const inbox = new StreamLiveInbox(true);
    inbox.listener(delta(1, 0, 'Hel'));
    inbox.listener(delta(1, 3, 'lo'));
    assert.deepEqual(inbox.takeDeltas(), [{ modelTurn: 1, offset: 0, text: 'Hello' }]);
    inbox.listener(delta(1, 5, '!'));
    inbox.listener(delta(2, 0, 'Next'));
    assert.deepEqual(inbox.takeDeltas(), [{ modelTurn: 1, offset: 5, text: '!' }, { modelTurn: 2, offset: 0, text: 'Next' }]);
  });

  it('sends nothing of an answer joined in its middle, after a gap, or of an older turn', () => {
    const inbox = new StreamLiveInbox(true);
    inbox.listener(delta(1, 4, 'late'));
    assert.deepEqual(inbox.takeDeltas(), [], 'joined mid-answer');
    inbox.listener(delta(2, 0, 'ab'));
    inbox.listener(delta(2, 5, 'gap'));
    inbox.listener(delta(1, 0, 'older'));
    assert.deepEqual(inbox.takeDeltas(), [{ modelTurn: 2, offset: 0, text: 'ab' }]);
  });

  it('starts a turn over at offset 0 (a retried call), dropping what of the first attempt still waits', () => {
    const inbox = new StreamLiveInbox(true);
    inbox.listener(delta(3, 0, 'first'));
    inbox.listener(delta(3, 0, 'second'));
    inbox.listener(delta(3, 6, ' try'));
    assert.deepEqual(inbox.takeDeltas(), [{ modelTurn: 3, offset: 0, text: 'second try' }]);
  });

  it('sends no delta of a turn once its ASSISTANT_MESSAGE went out, nor what waited before it', () => {
    const inbox = new StreamLiveInbox(true);
    inbox.listener(delta(1, 0, 'Hel'));
    inbox.takeDeltas();
    inbox.listener(delta(1, 3, 'lo'));
    inbox.answerSent();
    assert.deepEqual(inbox.takeDeltas(), []);
    inbox.listener(delta(1, 5, '!'));
    inbox.listener(delta(1, 0, 'again'));
    assert.deepEqual(inbox.takeDeltas(), []);
    inbox.listener(delta(2, 0, 'next turn'));
    assert.deepEqual(inbox.takeDeltas(), [{ modelTurn: 2, offset: 0, text: 'next turn' }]);
  });

  it('gives an answer up past MAX_QUEUED_CHARS waiting for a slow reader', () => {
    const inbox = new StreamLiveInbox(true);
    const half = 'x'.repeat(MAX_QUEUED_CHARS / 2 + 1);
    inbox.listener(delta(1, 0, half));
    inbox.listener(delta(1, half.length, half));
    inbox.listener(delta(1, 2 * half.length, 'more'));
    assert.deepEqual(inbox.takeDeltas(), []);
  });

  it('takes nudges, and only nudges when the stream sends no deltas; wait returns at once when something waits', async () => {
    const inbox = new StreamLiveInbox(false);
    inbox.listener(delta(1, 0, 'hidden'));
    assert.deepEqual(inbox.takeDeltas(), []);
    const signal = new AbortController().signal;
    const started = Date.now();
    setTimeout(() => inbox.listener({ type: 'committed', objectiveId: OBJECTIVE }), 20);
    await inbox.wait(5_000, signal);
    assert.ok(Date.now() - started < 1_000, 'the nudge ended the wait');
    assert.equal(inbox.takeNudge(), true);
    assert.equal(inbox.takeNudge(), false);
    const early = Date.now();
    await inbox.wait(30, signal);
    assert.ok(Date.now() - early >= 25, 'nothing waits: the full wait');
  });
});
