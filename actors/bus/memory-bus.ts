// The Bus port in process, for embedded mode: NATS subject semantics (`*` one
// token, `>` the rest), asynchronous delivery, first reply wins.
import { NoRespondersError, RequestTimeoutError, type Bus, type BusMessage, type BusSubscription } from '../../src/ports/bus';

interface Entry {
  tokens: string[];
  handler: (message: BusMessage) => void;
}

/** True when `subject` matches a NATS-style pattern. */
export function subjectMatches(patternTokens: string[], subject: string): boolean {
  const tokens = subject.split('.');
  for (let i = 0; i < patternTokens.length; i++) {
    if (patternTokens[i] === '>') return tokens.length > i;
    if (i >= tokens.length) return false;
    if (patternTokens[i] !== '*' && patternTokens[i] !== tokens[i]) return false;
  }
  return tokens.length === patternTokens.length;
}

/** An in-process Bus. Handlers run on a later tick, never inside `publish`/`request`. */
export class MemoryBus implements Bus {
  private readonly entries = new Set<Entry>();
  private closed = false;

  async request(subject: string, data: string, timeoutMs: number): Promise<string> {
    this.assertOpen();
    const targets = this.matching(subject);
    if (targets.length === 0) throw new NoRespondersError(subject);
    return new Promise<string>((resolve, reject) => {
      let answered = false;
      const timer = setTimeout(() => {
        answered = true;
        reject(new RequestTimeoutError(subject, timeoutMs));
      }, timeoutMs);
      const respond = (reply: string) => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        resolve(reply);
      };
      this.deliver(targets, { subject, data, respond });
    });
  }

  publish(subject: string, data: string): void {
    this.assertOpen();
    this.deliver(this.matching(subject), { subject, data, respond: () => undefined });
  }

  subscribe(pattern: string, handler: (message: BusMessage) => void): BusSubscription {
    this.assertOpen();
    const entry: Entry = { tokens: pattern.split('.'), handler };
    this.entries.add(entry);
    return { unsubscribe: () => this.entries.delete(entry) };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
  }

  private matching(subject: string): Entry[] {
    return [...this.entries].filter((entry) => subjectMatches(entry.tokens, subject));
  }

  private deliver(targets: Entry[], message: BusMessage): void {
    setImmediate(() => {
      for (const entry of targets) {
        if (!this.entries.has(entry)) continue;
        try {
          entry.handler(message);
        } catch (error) {
          // Like NatsBus: the message is lost, the process and the other subscribers are not.
          process.emitWarning(`bus handler for ${message.subject} failed: ${(error as Error)?.message ?? String(error)}`);
        }
      }
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('bus closed');
  }
}
