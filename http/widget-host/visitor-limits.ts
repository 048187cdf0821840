// The widget host's visitor limits (docs/operations.md "Widget hosts"): a
// visitor is anonymous, so creating objectives (each one runs a model) has a
// budget per session and a ceiling per widget, and a session holds at most a
// few event streams open. In memory on each node, as the API's rate limiter:
// N nodes behind a balancer allow N times the limits (documented there).
import { RateLimiter } from '../../src/auth/rate-limiter';
import type { WidgetVisitorLimits } from '../../src/config';
import { ResourceExhaustedError } from '../../src/errors';
import type { WidgetSessionPrincipal } from '../../src/ports/widget-sessions';

/** Retry-After of a refused stream: a page that lost track of a stream retries once the old one is gone. */
const STREAM_RETRY_SECONDS = 5;
const MAX_TRACKED_SESSIONS = 100_000;

export class VisitorLimits {
  private readonly perSession: RateLimiter;
  private readonly perWidget: RateLimiter;
  private readonly openStreams = new Map<string, number>();

  constructor(private readonly limits: WidgetVisitorLimits) {
    this.perSession = new RateLimiter({ ratePerSecond: limits.objectivesPerMinute / 60, burst: limits.objectivesPerMinute });
    this.perWidget = new RateLimiter({ ratePerSecond: limits.objectivesPerWidgetPerMinute / 60, burst: limits.objectivesPerWidgetPerMinute });
  }

  /**
   * Counts one objective created by `session`.
   * @throws ResourceExhaustedError (with Retry-After) past the session's budget or the widget's ceiling
   */
  takeObjective(session: WidgetSessionPrincipal): void {
    this.perSession.take(`widget_session:${session.sessionId}`);
    this.perWidget.take(`widget:${session.widgetId}`);
  }

  /**
   * Takes one of the session's stream slots; the answer gives it back (once, however often called).
   * @throws ResourceExhaustedError (with Retry-After) when the session holds its allowance of open streams
   */
  openStream(sessionId: string): () => void {
    const open = this.openStreams.get(sessionId) ?? 0;
    if (open >= this.limits.streamsPerSession) {
      throw new ResourceExhaustedError(`a widget session may hold at most ${this.limits.streamsPerSession} event streams open`, { retryAfterSeconds: STREAM_RETRY_SECONDS });
    }
    if (open === 0 && this.openStreams.size >= MAX_TRACKED_SESSIONS) {
      throw new ResourceExhaustedError('too many event streams are open on this node', { retryAfterSeconds: STREAM_RETRY_SECONDS });
    }
    this.openStreams.set(sessionId, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.openStreams.get(sessionId) ?? 1) - 1;
      if (left > 0) this.openStreams.set(sessionId, left);
      else this.openStreams.delete(sessionId);
    };
  }
}
