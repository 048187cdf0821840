// Runs the BUILT command (dist/src/cli.js) as a child process, as an operator
// would: one-shot commands, and `serve` with its JSON log lines parsed so a
// test can wait for "listening" and read what the node logged; also `serve` on
// a terminal (a pseudo-terminal from util-linux's `script`), stopped by Ctrl+C.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The compiled CLI; `npm test` builds it before mocha runs. */
export const CLI = path.resolve(__dirname, '../../dist/src/cli.js');

/** How long a started node may take to log "listening". */
const START_TIMEOUT_MS = 60_000;

/** Settings a developer's shell might export that would change what a test runs against (and every AGENTRT_*). */
const INHERITED_SETTINGS = ['PORT', 'HOST', 'DATABASE_URL', 'NATS_URL', 'LOG_LEVEL'];

/** Fails with a clear message when the CLI has not been built. */
export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first (npm test does)`);
}

/**
 * Hooks of a suite that runs the built CLI on a data folder of its own, made
 * before the suite and removed after it.
 * @returns the folder's path, once the suite runs
 */
export function useCliDataDir(): () => string {
  let dataDir: string | undefined;
  before(async () => {
    assertBuilt();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-e2e-'));
  });
  after(async () => {
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });
  return () => {
    if (!dataDir) throw new Error('the data folder is made in the suite\'s before hook');
    return dataDir;
  };
}

/** process.env without agentrt settings, plus the given ones (LOG_LEVEL info unless given). */
export function cliEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (INHERITED_SETTINGS.includes(name) || name.startsWith('AGENTRT_')) delete env[name];
  }
  return { ...env, LOG_LEVEL: 'info', ...settings };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `agentrt <args>` to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = collect(child);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, ...output() }));
  });
}

/** A log line of the node, parsed. */
export interface LogLine {
  msg?: string;
  [field: string]: unknown;
}

export interface ServeProcess {
  /** Base URL from the "listening" log line. */
  url: string;
  child: ChildProcess;
  /** Every stdout line so far, parsed (non-JSON lines are kept as `{ msg: line }`). */
  logs(): LogLine[];
  /** Raw stdout and stderr so far. */
  output(): { stdout: string; stderr: string };
  /** Sends the signal and resolves with the exit code and signal. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `agentrt serve` and resolves once it logs "listening".
 * @throws Error with the node's output when it exits or stays silent first
 */
export async function startServe(env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = collect(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const logs = () => parseLines(output().stdout);
  const url = await waitForListening(logs, exited, output).catch((error: unknown) => {
    // A node that never came up must not outlive the test (it would hold its data folder).
    child.kill('SIGKILL');
    throw error;
  });
  return {
    url,
    child,
    logs,
    output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

async function waitForListening(
  logs: () => LogLine[],
  exited: Promise<{ code: number | null }>,
  output: () => { stdout: string; stderr: string },
): Promise<string> {
  let exitCode: number | null | undefined;
  void exited.then(({ code }) => (exitCode = code));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const listening = logs().find((line) => line.msg === 'listening');
    if (typeof listening?.url === 'string') return listening.url;
    if (exitCode !== undefined) throw new Error(`agentrt serve exited with ${exitCode} before listening:\n${formatOutput(output())}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`agentrt serve did not log "listening" within ${START_TIMEOUT_MS} ms:\n${formatOutput(output())}`);
}

function collect(child: ChildProcess): () => { stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return () => ({ stdout, stderr });
}

function parseLines(text: string): LogLine[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        return { msg: line };
      }
    });
}

function formatOutput(output: { stdout: string; stderr: string }): string {
  return `stdout:\n${output.stdout}\nstderr:\n${output.stderr}`;
}

/** util-linux's `script`: runs a command on a pseudo-terminal, copying what it prints to its own stdout. */
const SCRIPT = '/usr/bin/script';
/** Ctrl+C typed on the terminal: its line discipline sends SIGINT to the node. */
const CTRL_C = '\x03';

export interface TerminalServeProcess {
  /** What the terminal showed so far, as written (colour codes, `\r\n` line ends). */
  screen(): string;
  /** Types Ctrl+C and resolves with the exit code once the node has stopped. */
  interrupt(): Promise<number | null>;
}

/**
 * Starts `agentrt serve` on a pseudo-terminal and resolves once the screen
 * shows `until` (the output without colour codes).
 * @throws Error with what the screen showed when the node exits or stays silent first
 */
export async function startServeInTerminal(env: NodeJS.ProcessEnv, until: string): Promise<TerminalServeProcess> {
  if (!existsSync(SCRIPT)) throw new Error(`${SCRIPT} is missing: install util-linux's script (Debian: bsdutils) to run the node on a pseudo-terminal`);
  // `script` runs the command through $SHELL -c, or /bin/sh (dash) when SHELL is
  // unset as under CI: dash stays as the node's parent and dies of the Ctrl+C
  // itself (exit 130) while the node stops cleanly. `exec` makes the node the
  // terminal's only process, as it is when a person types the command.
  const child = spawn(SCRIPT, ['-qfec', `exec '${process.execPath}' '${CLI}' serve`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const output = collect(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  const screen = () => output().stdout;
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!withoutColours(screen()).includes(until)) {
    if (exitCode !== undefined || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`agentrt serve on a terminal ${exitCode === undefined ? 'stayed silent' : `exited with ${exitCode}`} before showing "${until}":\n${formatOutput(output())}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    screen,
    interrupt() {
      child.stdin?.write(CTRL_C);
      return exited;
    },
  };
}

/** Text without its ANSI colour codes and carriage returns, as a person reads it. */
export function withoutColours(text: string): string {
  return text.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '');
}
