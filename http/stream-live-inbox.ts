// What one open event stream takes of its objective's live feed
// (src/ports/objective-live.ts) until its pump gets to it: a nudge (new events
// wait to be read) and, when the stream sends them, the answer's deltas.
//
// The deltas a stream sends keep one rule a client can rely on: per model
// turn they are contiguous from offset 0 (a delta at offset 0 again means the
// call was retried: the turn's text starts over), and none follows the
// ASSISTANT_MESSAGE the stream sent for that turn. So a stream that joins in
// the middle of an answer sends nothing of it (the ASSISTANT_MESSAGE brings
// it whole), nor does it after a gap (a delta lost on the bus). Deltas that
// wait are merged, so a slow reader gets fewer, longer frames; past
// MAX_QUEUED_CHARS waiting, the turn's deltas are given up (its
// ASSISTANT_MESSAGE still comes).
import type { ObjectiveAnswerDelta, ObjectiveLiveNews } from '../src/ports/objective-live';

/** A delta as a stream sends it (`event: delta`): the model turn, where the text goes in the turn's answer, the text. */
export type StreamDelta = Pick<ObjectiveAnswerDelta, 'modelTurn' | 'offset' | 'text'>;

/** Most answer text waiting for one slow stream (UTF-16 code units). */
export const MAX_QUEUED_CHARS = 1 << 20;

export class StreamLiveInbox {
  private queued: StreamDelta[] = [];
  private queuedChars = 0;
  private nudged = false;
  private wake: (() => void) | undefined;
  /** The turn whose text the stream is sending, and how much of it it took. */
  private turn: number | undefined;
  private length = 0;
  /** Turns up to this one are answered (their ASSISTANT_MESSAGE sent) or given up: their deltas are dropped. */
  private closedThrough = 0;

  /** @param sendsDeltas whether the stream sends deltas (else it takes only nudges) */
  constructor(private readonly sendsDeltas: boolean) {}

  /** The listener to follow the objective with. */
  readonly listener = (news: ObjectiveLiveNews): void => {
    if (news.type === 'committed') this.nudged = true;
    else if (!this.sendsDeltas || !this.accept(news)) return;
    this.wake?.();
  };

  /** Resolves once deltas or a nudge wait, after `ms`, or when `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    if (this.queued.length > 0 || this.nudged || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
  }

  /** The deltas to send now, in order. */
  takeDeltas(): StreamDelta[] {
    const deltas = this.queued;
    this.queued = [];
    this.queuedChars = 0;
    return deltas;
  }

  /** Whether events were committed since the last call (the stream reads them now). */
  takeNudge(): boolean {
    const nudged = this.nudged;
    this.nudged = false;
    return nudged;
  }

  /**
   * The stream sends an ASSISTANT_MESSAGE: it ends the answer being streamed
   * (the turn's deltas were all published before the message was committed),
   * and any deltas still waiting came before it too.
   */
  answerSent(): void {
    let latest = this.turn ?? 0;
    for (const delta of this.queued) latest = Math.max(latest, delta.modelTurn);
    this.closedThrough = Math.max(this.closedThrough, latest);
    this.takeDeltas();
  }

  /** Queues a delta that keeps the turn's text contiguous; false when it is dropped. */
  private accept({ modelTurn, offset, text }: ObjectiveAnswerDelta): boolean {
    if (modelTurn <= this.closedThrough || text.length === 0) return false;
    if (offset === 0) {
      if (this.turn !== undefined && modelTurn < this.turn) return false;
      // The turn's call was retried: what waits of its first attempt is superseded.
      if (modelTurn === this.turn) this.drop(modelTurn);
      this.turn = modelTurn;
      this.length = 0;
    } else if (modelTurn !== this.turn || offset !== this.length) {
      return false;
    }
    if (this.queuedChars + text.length > MAX_QUEUED_CHARS) {
      // The reader does not keep up: give this answer up, its ASSISTANT_MESSAGE will bring it.
      this.closedThrough = Math.max(this.closedThrough, modelTurn);
      this.drop(modelTurn);
      return false;
    }
    this.length += text.length;
    this.queuedChars += text.length;
    const last = this.queued.at(-1);
    if (last && last.modelTurn === modelTurn && last.offset + last.text.length === offset) last.text += text;
    else this.queued.push({ modelTurn, offset, text });
    return true;
  }

  private drop(modelTurn: number): void {
    this.queued = this.queued.filter((delta) => delta.modelTurn !== modelTurn);
    this.queuedChars = this.queued.reduce((sum, delta) => sum + delta.text.length, 0);
  }
}
