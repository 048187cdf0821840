// Live news of an objective for its open event streams, never stored or
// replayed: the model's answer text as the provider streams it (deltas), and
// a nudge when new events of the objective are committed, so a stream reads
// them at once instead of at its next poll. Fire-and-forget: a stream that
// misses a delta still gets the ASSISTANT_MESSAGE event with the whole answer,
// and one that misses a nudge still polls.

/** Text the model streamed for one model turn; `offset` is where it starts in the turn's answer (0 again when a call is retried). */
export interface ObjectiveAnswerDelta {
  type: 'delta';
  objectiveId: string;
  /** The objective's model turn (1, 2, ...) this text belongs to. */
  modelTurn: number;
  /** Characters (UTF-16 code units) of the turn's answer before this text. */
  offset: number;
  text: string;
}

/** New events of the objective are committed (readable from the read model). */
export interface ObjectiveEventsCommitted {
  type: 'committed';
  objectiveId: string;
}

export type ObjectiveLiveNews = ObjectiveAnswerDelta | ObjectiveEventsCommitted;

/** Where live news is published and followed; every node's streams see every node's news. */
export interface ObjectiveLiveFeed {
  /** Hands `news` to the streams following its objective, on any node; lost when none follows. Never throws. */
  publish(news: ObjectiveLiveNews): void;
  /**
   * Calls `listener` with each piece of news of `objectiveId` until the
   * returned function is called. When a node is answering for the objective
   * meanwhile, the answer's text so far follows as one delta at offset 0, so
   * a stream opened after the model's first token still shows the answer grow.
   */
  follow(objectiveId: string, listener: (news: ObjectiveLiveNews) => void): () => void;
  /** The model call streaming the objective's answer on this node has ended: its text is no longer offered to streams that open. */
  answerEnded?(objectiveId: string): void;
}
