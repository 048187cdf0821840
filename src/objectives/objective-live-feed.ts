// The objectives' live feed (src/ports/objective-live.ts) over the node's
// bus, bound once the actor runtime runs. Answer deltas travel as JSON on the
// core subject `<prefix>.live.objective.<id>` (never JetStream: nothing is
// stored, a stream that misses one still gets the ASSISTANT_MESSAGE).
// Commit nudges cost nothing new on the bus: in cluster mode a followed
// objective's events, which the outbox relay publishes to JetStream anyway,
// reach a core subscription of their subject on every node; in embedded mode
// the runtime tells the feed of each turn it commits while any stream is
// open (the feed then looks the objective up: a map lookup per turn; with no
// stream open the runtime's cost is one check of an empty set). A node
// subscribes on the bus only for the objectives its open streams follow,
// once per objective however many streams follow it.
// A stream that opens while an answer streams would miss its beginning (deltas
// are not stored): the node answering keeps the text of each answer it is
// streaming, and a new follower asks for it on `<prefix>.live.catchup.<id>`
// (one wildcard subscription per node); the answering node sends it as one
// delta at offset 0, which a stream takes as the answer's start.
import type { Bus, BusMessage, BusSubscription } from '../ports/bus';
import type { ObjectiveLiveFeed, ObjectiveLiveNews } from '../ports/objective-live';
import { objectiveEventsOfIdPattern } from './objective-events';
import { OBJECTIVE_KIND } from './objective-state';

/** What the feed needs of the node's actor runtime (ActorRuntime is one). */
export interface LiveFeedRuntime {
  /** The node's bus: in process (embedded mode) or core NATS (cluster mode). */
  readonly bus: Bus;
  /** The first tokens of the runtime's subjects (AGENTRT_SUBJECT_PREFIX, with the cluster id in cluster mode). */
  readonly subjectPrefix: string;
  /** True when the events the runtime publishes also reach the bus's subscribers of their subjects (JetStream on the bus's NATS connection). */
  readonly eventsOnBus: boolean;
  /** Calls `listener` after each turn of this node that committed events (they are readable then); returns the way to stop. */
  onEventsCommitted(listener: (kind: string, actorId: string) => void): () => void;
}

type Listener = (news: ObjectiveLiveNews) => void;

/** The streams of this node following one objective, and the bus subscriptions they share. */
interface Followed {
  listeners: Set<Listener>;
  subscriptions: BusSubscription[];
}

/** An objective id is one subject token: anything else is never followed or published (no wildcard can slip in). */
const SUBJECT_TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

/** The subject of an objective's live news. */
export function objectiveLiveSubject(subjectPrefix: string, objectiveId: string): string {
  return `${subjectPrefix}.live.objective.${objectiveId}`;
}

/** Where a new follower asks the node answering for an objective for the answer's text so far. */
function catchUpSubject(subjectPrefix: string, objectiveId: string): string {
  return `${subjectPrefix}.live.catchup.${objectiveId}`;
}

/** The most text kept of one answer for streams that open late; past it the answer is no longer offered (the ASSISTANT_MESSAGE still comes). */
const MAX_CATCH_UP_CHARS = 1 << 20;

/** An answer this node is streaming: its model turn and text so far. */
interface Answering {
  modelTurn: number;
  text: string;
}

/** The news in a live message, when it is well formed and of `objectiveId`. */
function newsIn(message: BusMessage, objectiveId: string): ObjectiveLiveNews | undefined {
  let news: Partial<ObjectiveLiveNews>;
  try {
    news = JSON.parse(message.data) as Partial<ObjectiveLiveNews>;
  } catch {
    return undefined;
  }
  if (news?.objectiveId !== objectiveId) return undefined;
  if (news.type === 'committed') return { type: 'committed', objectiveId };
  if (news.type === 'delta' && Number.isInteger(news.modelTurn) && Number.isInteger(news.offset) && typeof news.text === 'string') {
    return { type: 'delta', objectiveId, modelTurn: news.modelTurn!, offset: news.offset!, text: news.text };
  }
  return undefined;
}

export class BusObjectiveLiveFeed implements ObjectiveLiveFeed {
  private runtime: LiveFeedRuntime | null = null;
  private stopCommitHook: (() => void) | undefined;
  private readonly followed = new Map<string, Followed>();
  private readonly answering = new Map<string, Answering>();
  private catchUpRequests: BusSubscription | undefined;

  /** Starts carrying news over `runtime`'s bus (objectives followed already included). */
  bind(runtime: LiveFeedRuntime): void {
    this.unbind();
    this.runtime = runtime;
    for (const [objectiveId, followed] of this.followed) this.subscribe(objectiveId, followed);
    this.hookCommits();
    try {
      this.catchUpRequests = runtime.bus.subscribe(catchUpSubject(runtime.subjectPrefix, '*'), (message) => this.answerCatchUp(message.subject));
    } catch {
      // A closed bus: late streams show the whole answer when it is recorded.
    }
  }

  /** Stops carrying news (the runtime stops): publications are dropped, followers get nothing more until bound again. */
  unbind(): void {
    this.unhookCommits();
    this.catchUpRequests?.unsubscribe();
    this.catchUpRequests = undefined;
    this.answering.clear();
    for (const followed of this.followed.values()) this.unsubscribe(followed);
    this.runtime = null;
  }

  publish(news: ObjectiveLiveNews): void {
    const runtime = this.runtime;
    if (!runtime || !SUBJECT_TOKEN.test(news.objectiveId)) return;
    if (news.type === 'delta') this.keepAnswer(news);
    if (runtime.bus.connected?.() === false) return;
    try {
      runtime.bus.publish(objectiveLiveSubject(runtime.subjectPrefix, news.objectiveId), JSON.stringify(news));
    } catch {
      // A bus closing under us: the news is lost, as it may be anyway.
    }
  }

  follow(objectiveId: string, listener: Listener): () => void {
    if (!SUBJECT_TOKEN.test(objectiveId)) return () => undefined;
    let followed = this.followed.get(objectiveId);
    if (!followed) {
      followed = { listeners: new Set(), subscriptions: [] };
      this.followed.set(objectiveId, followed);
      this.subscribe(objectiveId, followed);
      this.hookCommits();
    }
    // A wrapper of its own: one listener function may follow twice, and each follow ends on its own.
    const own: Listener = (news) => listener(news);
    followed.listeners.add(own);
    this.askCatchUp(objectiveId);
    return () => {
      const current = this.followed.get(objectiveId);
      if (!current?.listeners.delete(own) || current.listeners.size > 0) return;
      this.unsubscribe(current);
      this.followed.delete(objectiveId);
      if (this.followed.size === 0) this.unhookCommits();
    };
  }

  answerEnded(objectiveId: string): void {
    this.answering.delete(objectiveId);
  }

  /** Keeps the text of an answer streaming here (offset 0 starts it again); one that outgrows the cap or skips text is no longer offered. */
  private keepAnswer(delta: Extract<ObjectiveLiveNews, { type: 'delta' }>): void {
    const kept = delta.offset === 0 ? { modelTurn: delta.modelTurn, text: '' } : this.answering.get(delta.objectiveId);
    if (!kept || kept.modelTurn !== delta.modelTurn || kept.text.length !== delta.offset || kept.text.length + delta.text.length > MAX_CATCH_UP_CHARS) {
      this.answering.delete(delta.objectiveId);
      return;
    }
    kept.text += delta.text;
    this.answering.set(delta.objectiveId, kept);
  }

  /** A new follower: the node answering for the objective, if any, sends the text so far (after the follower's subscription, so nothing falls between). */
  private askCatchUp(objectiveId: string): void {
    const runtime = this.runtime;
    if (!runtime || runtime.bus.connected?.() === false) return;
    try {
      runtime.bus.publish(catchUpSubject(runtime.subjectPrefix, objectiveId), '');
    } catch {
      // The bus is closing: the stream shows the whole answer when it is recorded.
    }
  }

  private answerCatchUp(subject: string): void {
    const objectiveId = subject.slice(subject.lastIndexOf('.') + 1);
    const kept = this.answering.get(objectiveId);
    if (kept?.text) this.publish({ type: 'delta', objectiveId, modelTurn: kept.modelTurn, offset: 0, text: kept.text });
  }

  /** What the feed holds now: followed objectives, their listeners, bus subscriptions, and whether it listens to the runtime's commits (none once every stream closed). */
  holdings(): { objectives: number; listeners: number; subscriptions: number; commitHook: boolean } {
    let listeners = 0;
    let subscriptions = 0;
    for (const followed of this.followed.values()) {
      listeners += followed.listeners.size;
      subscriptions += followed.subscriptions.length;
    }
    return { objectives: this.followed.size, listeners, subscriptions, commitHook: this.stopCommitHook !== undefined };
  }

  /** Embedded mode, while any objective is followed: the runtime tells of each turn it commits. */
  private hookCommits(): void {
    const runtime = this.runtime;
    if (!runtime || runtime.eventsOnBus || this.stopCommitHook || this.followed.size === 0) return;
    this.stopCommitHook = runtime.onEventsCommitted((kind, actorId) => {
      if (kind === OBJECTIVE_KIND) this.tell(actorId, { type: 'committed', objectiveId: actorId });
    });
  }

  private unhookCommits(): void {
    this.stopCommitHook?.();
    this.stopCommitHook = undefined;
  }

  private subscribe(objectiveId: string, followed: Followed): void {
    const runtime = this.runtime;
    if (!runtime) return;
    try {
      followed.subscriptions.push(runtime.bus.subscribe(objectiveLiveSubject(runtime.subjectPrefix, objectiveId), (message) => {
        const news = newsIn(message, objectiveId);
        if (news) this.tell(objectiveId, news);
      }));
      if (runtime.eventsOnBus) {
        followed.subscriptions.push(runtime.bus.subscribe(objectiveEventsOfIdPattern(objectiveId), () => this.tell(objectiveId, { type: 'committed', objectiveId })));
      }
    } catch {
      // A closed bus: the followers poll, as when a nudge is missed.
      this.unsubscribe(followed);
    }
  }

  private unsubscribe(followed: Followed): void {
    for (const subscription of followed.subscriptions) {
      try {
        subscription.unsubscribe();
      } catch {
        // Its connection closed: nothing is delivered on it any more.
      }
    }
    followed.subscriptions = [];
  }

  private tell(objectiveId: string, news: ObjectiveLiveNews): void {
    const followed = this.followed.get(objectiveId);
    if (!followed) return;
    for (const listener of [...followed.listeners]) {
      try {
        listener(news);
      } catch {
        // One stream's trouble is its own (and this may run in an actor's turn).
      }
    }
  }
}
