// The Bus port in process, for embedded mode: NATS subject semantics (`*` one
// token, `>` the rest), asynchronous delivery, first reply wins.
import { NoRespondersError, RequestTimeoutError, type Bus, type BusMessage, type BusSubscription } from '../../src/ports/bus';

interface Entry {
  tokens: string[];
  handler: (message: BusMessage) => void;
  /** Subscription order: several matching subscriptions are handed a message in the order they subscribed. */
  order: number;
}

/** A node of the subscription tree: one level per subject token. */
interface TreeNode {
  literal: Map<string, TreeNode>;
  /** The `*` child. */
  anyToken?: TreeNode;
  /** Patterns ending here. */
  exact: Set<Entry>;
  /** Patterns ending here with `>`: one or more further tokens. */
  rest: Set<Entry>;
}

const treeNode = (): TreeNode => ({ literal: new Map(), exact: new Set(), rest: new Set() });

/**
 * Subscriptions indexed by token: a subject is matched in one walk of its own
 * tokens, whatever the number of subscriptions (a node subscribes once per
 * owned shard, so a scan of every pattern per request would cost hundreds of
 * comparisons).
 */
class SubscriptionTree {
  private readonly root = treeNode();

  add(entry: Entry): void {
    let node = this.root;
    for (const token of entry.tokens) {
      if (token === '>') return void node.rest.add(entry);
      if (token === '*') node = node.anyToken ??= treeNode();
      else {
        let child = node.literal.get(token);
        if (!child) node.literal.set(token, (child = treeNode()));
        node = child;
      }
    }
    node.exact.add(entry);
  }

  /** Removes `entry`; leaves its (empty) nodes in place, as subjects tend to be subscribed again. */
  delete(entry: Entry): boolean {
    let node: TreeNode | undefined = this.root;
    for (const token of entry.tokens) {
      if (token === '>') return node.rest.delete(entry);
      node = token === '*' ? node.anyToken : node.literal.get(token);
      if (!node) return false;
    }
    return node.exact.delete(entry);
  }

  match(subject: string): Entry[] {
    const found: Entry[] = [];
    const tokens = subject.split('.');
    const visit = (node: TreeNode, index: number) => {
      if (index === tokens.length) {
        for (const entry of node.exact) found.push(entry);
        return;
      }
      for (const entry of node.rest) found.push(entry);
      const child = node.literal.get(tokens[index]);
      if (child) visit(child, index + 1);
      if (node.anyToken) visit(node.anyToken, index + 1);
    };
    visit(this.root, 0);
    return found.length > 1 ? found.sort((a, b) => a.order - b.order) : found;
  }

  clear(): void {
    Object.assign(this.root, treeNode());
  }
}

/** An in-process Bus. Handlers run on a later tick, never inside `publish`/`request`. */
export class MemoryBus implements Bus {
  private readonly entries = new Set<Entry>();
  private readonly tree = new SubscriptionTree();
  private subscribed = 0;
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
    const entry: Entry = { tokens: pattern.split('.'), handler, order: this.subscribed++ };
    this.entries.add(entry);
    this.tree.add(entry);
    return {
      unsubscribe: () => {
        if (this.entries.delete(entry)) this.tree.delete(entry);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
    this.tree.clear();
  }

  private matching(subject: string): Entry[] {
    return this.tree.match(subject);
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
