// The three agentrt nodes of the chaos run: built CLI processes (`agentrt
// serve`, started as the e2e tests start them), each with its own data folder,
// killed, restarted, stopped and continued by the run. A node's output is
// appended to a log file per start, kept when the run fails.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { cliEnv, startServe, type ServeProcess } from '../test/e2e/cli-process';

export type NodeState = 'up' | 'down' | 'stopped';

export class ChaosNode {
  process: ServeProcess | null = null;
  state: NodeState = 'down';
  nodeId = '';
  starts = 0;

  constructor(
    readonly index: number,
    readonly dataDir: string,
    private readonly logDir: string,
    private readonly env: () => Record<string, string>,
  ) {}

  get name(): string {
    return `node${this.index}`;
  }

  get url(): string {
    return this.process!.url;
  }

  async start(): Promise<void> {
    await fs.mkdir(this.dataDir, { recursive: true });
    this.process = await startServe(cliEnv({ ...this.env(), AGENTRT_DATA_DIR: this.dataDir }));
    this.starts += 1;
    const listening = this.process.logs().find((line) => line.msg === 'listening');
    this.nodeId = String(listening?.nodeId ?? '');
    this.state = 'up';
  }

  /** kill -9. */
  async kill(): Promise<void> {
    const running = this.process;
    this.state = 'down';
    if (!running) return;
    await running.stop('SIGKILL');
    await this.saveLog();
    this.process = null;
  }

  /** SIGTERM (a graceful stop, as a deploy does): no longer live for the load at once; waits for the exit. @returns the exit code */
  async terminate(): Promise<number | null> {
    const running = this.process;
    this.state = 'down';
    if (!running) return null;
    const { code } = await running.stop('SIGTERM');
    await this.saveLog();
    this.process = null;
    return code;
  }

  pause(): void {
    this.process?.child.kill('SIGSTOP');
    this.state = 'stopped';
  }

  resume(): void {
    this.process?.child.kill('SIGCONT');
    this.state = 'up';
  }

  /** Writes this start's output to `<logDir>/nodeN.startK.log`. */
  async saveLog(): Promise<void> {
    if (!this.process) return;
    const { stdout, stderr } = this.process.output();
    await fs.writeFile(path.join(this.logDir, `${this.name}.start${this.starts}.log`), `${stdout}\n--- stderr ---\n${stderr}`);
  }

  /** Warnings and errors this start logged (pino levels 40 and up). */
  problems(): Array<Record<string, unknown>> {
    if (!this.process) return [];
    return this.process.logs().filter((line) => typeof line.level === 'number' && line.level >= 40) as Array<Record<string, unknown>>;
  }

  /** Stops for good: SIGCONT when stopped, then SIGKILL. */
  async dispose(): Promise<void> {
    if (!this.process) return;
    if (this.state === 'stopped') this.process.child.kill('SIGCONT');
    await this.saveLog().catch(() => undefined);
    await this.process.stop('SIGKILL');
    this.process = null;
    this.state = 'down';
  }
}
