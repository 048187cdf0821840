// The steady load of a chaos scenario: objectives created at a fixed rate
// through random live nodes, over the cluster's agents in turn, each with its
// script for the scripted model. A creation is retried (5xx, 409, 429, no
// answer) with the same Idempotency-Key until it is accepted or its deadline
// passes, as a client would; external ids are `chaos-<index>`.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChaosCluster } from './cluster';
import { say } from './log';

const CREATE_DEADLINE_MS = 150_000;
const RETRY_PAUSE_MS = 500;

/** The prefix of the load's external ids and Idempotency-Keys (the checks tell its objectives from others by it). */
export const LOAD_PREFIX = 'chaos-';

export class ObjectiveLoad {
  /** Index → objective id, for each accepted creation. */
  readonly created = new Map<number, string>();
  readonly failures: Array<{ index: number; why: string }> = [];
  private readonly creations: Array<Promise<void>> = [];
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param rate objectives per second
   * @param script the scripted model's message for objective `index`
   */
  constructor(
    private readonly cluster: ChaosCluster,
    private readonly rate: number,
    private readonly script: (index: number) => string,
  ) {}

  get requested(): number {
    return this.creations.length;
  }

  start(): void {
    let index = 0;
    this.timer = setInterval(() => {
      this.creations.push(this.create(index++));
    }, 1000 / this.rate);
    say(`load started: ${this.rate} objectives/s over ${this.cluster.agents.length} agents, each "${this.script(0).replace(/\n/g, '\\n')}"`);
  }

  /** Stops creating and waits for the creations in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    say(`load stopped after ${this.creations.length} objectives; waiting for the creations in flight`);
    await Promise.all(this.creations);
    say(`creations done: ${this.created.size} created, ${this.failures.length} failed`);
  }

  /** Stops creating at once (teardown). */
  abort(): void {
    clearInterval(this.timer);
  }

  private async create(index: number): Promise<void> {
    const { cluster } = this;
    const agent = cluster.agents[index % cluster.agents.length];
    const body = { agentId: agent.id, initialMessage: this.script(index), metadata: { externalId: `${LOAD_PREFIX}${index}`, labels: { receiver: agent.kind } } };
    const deadline = Date.now() + CREATE_DEADLINE_MS;
    let last = '';
    while (Date.now() < deadline) {
      const node = cluster.anyLiveNode();
      if (node) {
        try {
          const answer = await cluster.request(node, 'POST', `/v1/workspaces/${cluster.workspaceId}/objectives`, body, { 'idempotency-key': `${LOAD_PREFIX}${index}` });
          if (answer.status < 300) {
            this.created.set(index, answer.body.metadata.id);
            return;
          }
          last = `${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
          if (answer.status < 500 && answer.status !== 429 && answer.status !== 409) break;
        } catch (error) {
          last = (error as Error).message;
        }
      }
      await sleep(RETRY_PAUSE_MS);
    }
    this.failures.push({ index, why: last });
  }
}
