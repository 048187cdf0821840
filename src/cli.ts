#!/usr/bin/env node
// The `agentrt` command: serve, migrate, bootstrap, cluster status,
// rotate-master-key and --version. It parses arguments, calls src/server.ts and
// prints; stdout carries only each command's output (logs go to stderr except
// under `serve`).
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runtimeOptionsFromEnv } from '../actors';
import { EmbeddedDatabaseLockedError } from '../persistence/embedded-postgres';
import { rotateMasterKey } from '../persistence/repositories/data-key.store';
import type { BootstrapResult } from './accounts/account.service';
import { formatClusterStatus } from './cluster-status-text';
import { ConfigError, dataDirFrom, loadConfig, UnreachableServerError, type Config } from './config';
import { InvalidArgumentError } from './errors';
import { replaceMasterKeyFile } from './crypto/master-key-file';
import { createLogger, type Logger } from './logger';
import { loadMasterKey } from './master-key';
import type { ClusterStatus } from './schemas/cluster.schema';
import { GLOBAL_KEY_TOKEN_FILE, ListenError, openDatabase, openServices, startNode } from './server';

const USAGE = `Usage: agentrt <command> [options]

Commands:
  serve                                   run a node (configuration from the environment)
  migrate                                 apply pending database migrations and exit
  bootstrap --account NAME --email EMAIL [--json]
                                          create an account, its first workspace, its admin
                                          profile and its global API key; print the token once
  cluster status [--url URL] [--token TOKEN] [--json]
                                          print the nodes of a running cluster and the shard
                                          ranges each owns (--json: GET /v1/cluster as is);
                                          URL: AGENTRT_URL, else http://127.0.0.1:$PORT;
                                          TOKEN: AGENTRT_TOKEN, else (only for that default
                                          local URL) the token file in AGENTRT_DATA_DIR
  rotate-master-key [--new-key BASE64]    rewrap every workspace data key under a new master key
                                          (default: AGENTRT_NEW_MASTER_KEY); stop the nodes first
  help, --help, -h                        print this text (also after any command)
  version, --version, -v                  print the version of agentrt

Configuration: see docs/operations.md.`;

/** Raised for a wrong command line; printed with the usage text, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A failure the operator can act on from its message alone (printed without a stack, exit code 1). */
export class CommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandError';
  }
}

/** Flags asking for the usage text, wherever they stand on the command line (`agentrt serve --help`). */
const HELP_FLAGS: readonly (string | undefined)[] = ['--help', '-h'];

/** Exit codes of the command. */
export const ExitCode = { OK: 0, FAILED: 1, USAGE: 2 } as const;

type Command = (args: string[], env: NodeJS.ProcessEnv) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  serve: serveCommand,
  migrate: migrateCommand,
  bootstrap: bootstrapCommand,
  cluster: clusterCommand,
  'rotate-master-key': rotateMasterKeyCommand,
};

/** The commands `main` runs (besides help and version): the usage text lists each of them. */
export const COMMAND_NAMES: readonly string[] = Object.keys(COMMANDS);

/**
 * Runs one command line (without `node` and the script) and resolves to the
 * process exit code. `serve` resolves only after a signal has stopped the node.
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [name, ...args] = argv;
  if (name === 'help' || HELP_FLAGS.includes(name) || args.some((arg) => HELP_FLAGS.includes(arg))) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.OK;
  }
  if (name === 'version' || name === '--version' || name === '-v') {
    process.stdout.write(`${packageVersion()}\n`);
    return ExitCode.OK;
  }
  const command = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  try {
    if (!command) throw new UsageError(name === undefined ? 'no command given' : `unknown command "${name}"`);
    return await command(args, env);
  } catch (error) {
    return reportFailure(error);
  }
}

function reportFailure(error: unknown): number {
  if (error instanceof UsageError || isParseArgsError(error)) {
    process.stderr.write(`agentrt: ${(error as Error).message}\n\n${USAGE}\n`);
    return ExitCode.USAGE;
  }
  const message = isExpected(error) ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`agentrt: ${message}\n`);
  return ExitCode.FAILED;
}

/** Failures an operator causes and can fix: the message says it all, a stack trace would only hide it. */
function isExpected(error: unknown): error is Error {
  return [ConfigError, CommandError, EmbeddedDatabaseLockedError, ListenError, InvalidArgumentError, UnreachableServerError].some((type) => error instanceof type);
}

function isParseArgsError(error: unknown): boolean {
  return error instanceof TypeError && String((error as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS');
}

/** `agentrt serve`: runs a node until SIGTERM or SIGINT, then stops it gracefully. */
async function serveCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  parseArgs({ args, options: {}, strict: true });
  const config = loadConfig(env);
  const logger = createLogger({ level: config.logLevel, format: config.logFormat, fd: 1 });
  // Listen for signals before starting, so one that arrives during start-up
  // stops the node as soon as it is up instead of killing it half-started.
  const stopSignal = nextSignal(['SIGTERM', 'SIGINT']);
  const runtimeOptions = runtimeOptionsFromEnv(env);
  const node = await startNode(config, { logger, runtimeOptions });
  logger.info(`stop: Ctrl+C or SIGTERM (running work drains first, within ${Math.ceil(runtimeOptions.drainTimeoutMs / 1000)} s)`);
  const signal = await stopSignal;
  logger.info({ signal, drainTimeoutMs: runtimeOptions.drainTimeoutMs }, 'shutting down');
  // The stop ends within the drain time by itself; a step that hangs past it (a database that stopped answering) must not keep the process.
  const overdue = setTimeout(() => {
    logger.error({ drainTimeoutMs: runtimeOptions.drainTimeoutMs }, 'shutdown did not finish within the drain time: exiting');
    process.exit(ExitCode.FAILED);
  }, runtimeOptions.drainTimeoutMs);
  await node.stop();
  clearTimeout(overdue);
  logger.info('stopped');
  return ExitCode.OK;
}

/** Resolves with the first of the signals; a second signal while stopping exits at once. */
function nextSignal(signals: NodeJS.Signals[]): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      for (const name of signals) process.off(name, onSignal);
      for (const name of signals) process.once(name, () => process.exit(ExitCode.FAILED));
      resolve(signal);
    };
    for (const name of signals) process.on(name, onSignal);
  });
}

/** `agentrt migrate`: applies pending migrations (under the advisory lock) and prints their names. */
async function migrateCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  parseArgs({ args, options: {}, strict: true });
  const config = loadConfig(env);
  const database = await openDatabase(config, stderrLogger(config));
  await database.close();
  const lines = database.applied.length > 0 ? database.applied.map((name) => `applied ${name}`) : ['no pending migrations'];
  process.stdout.write(`${lines.join('\n')}\n`);
  return ExitCode.OK;
}

/** `agentrt bootstrap`: creates an account and prints its global key token once. */
async function bootstrapCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { account: { type: 'string' }, email: { type: 'string' }, json: { type: 'boolean', default: false } },
    strict: true,
  });
  if (!values.account) throw new UsageError('bootstrap needs --account NAME');
  if (!values.email) throw new UsageError('bootstrap needs --email EMAIL');
  const config = loadConfig(env);
  const { database, services } = await openServices(config, stderrLogger(config));
  try {
    const created = await services.accounts.bootstrap({ accountName: values.account, email: values.email });
    process.stdout.write(values.json ? `${JSON.stringify(created)}\n` : describeBootstrap(created));
  } finally {
    await database.close();
  }
  return ExitCode.OK;
}

function describeBootstrap(created: BootstrapResult): string {
  return [
    `account    ${created.accountId}`,
    `workspace  ${created.workspaceId}`,
    `profile    ${created.profileId}`,
    `global key ${created.globalApiKey.id}`,
    '',
    'Global API key token (shown only now; store it safely):',
    created.globalApiKey.token,
    '',
  ].join('\n');
}

/** `agentrt cluster status`: prints GET /v1/cluster of a running node, its shards as ranges (or the JSON with --json). */
async function clusterCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { url: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean', default: false } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1 || positionals[0] !== 'status') throw new UsageError('cluster takes one subcommand: status');
  const { base, token, tokenSource } = await clusterTarget(values, env);
  const url = new URL('/v1/cluster', base);
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } }).catch((error: Error) => {
    // fetch hides the reason (ECONNREFUSED, ENOTFOUND...) in its cause.
    throw new CommandError(`cannot reach ${url.origin}: ${(error.cause as Error | undefined)?.message ?? error.message}`);
  });
  const body = await response.text();
  if (!response.ok) {
    const hint = response.status === 401 ? ` (the token came from ${tokenSource})` : '';
    process.stderr.write(`agentrt: GET /v1/cluster answered ${response.status}${hint}: ${body}\n`);
    return ExitCode.FAILED;
  }
  const status = JSON.parse(body) as ClusterStatus;
  process.stdout.write(values.json ? `${JSON.stringify(status)}\n` : formatClusterStatus(status, new Date()));
  return ExitCode.OK;
}

/** The node `cluster status` asks, the token it sends, and where that token came from (for a refusal's message). */
interface ClusterTarget {
  base: string;
  token: string;
  tokenSource: string;
}

/**
 * The node to ask and the token to send. The token file holds this machine's
 * global API key: it is sent only to the default local node, never to a node
 * named by --url or AGENTRT_URL, which could be anyone's.
 * @throws CommandError when no token is given and the file may not (or cannot) be used
 */
async function clusterTarget(values: { url?: string; token?: string }, env: NodeJS.ProcessEnv): Promise<ClusterTarget> {
  const named = values.url ?? (env.AGENTRT_URL || undefined);
  const base = named ?? `http://127.0.0.1:${env.PORT || 8080}`;
  if (values.token) return { base, token: values.token, tokenSource: '--token' };
  if (env.AGENTRT_TOKEN) return { base, token: env.AGENTRT_TOKEN, tokenSource: 'AGENTRT_TOKEN' };
  const file = path.join(dataDirFrom(env), GLOBAL_KEY_TOKEN_FILE);
  if (named !== undefined) {
    const option = values.url !== undefined ? '--url' : 'AGENTRT_URL';
    throw new CommandError(
      `cluster status needs --token TOKEN or AGENTRT_TOKEN to ask ${named} (${option}): the token file ${file} is sent only to the local node, http://127.0.0.1:$PORT, when neither --url nor AGENTRT_URL is set`,
    );
  }
  const token = await fs.readFile(file, 'utf8').then((text) => text.trim(), () => '');
  if (!token) throw new CommandError(`cluster status needs --token TOKEN, AGENTRT_TOKEN or the token file ${file} (AGENTRT_DATA_DIR)`);
  return { base, token, tokenSource: `the token file ${file}` };
}

/**
 * `agentrt rotate-master-key`: rewraps every workspace data key from the current
 * master key to the new one in one transaction (docs/operations.md), then
 * replaces `master.key` when the current key came from that file.
 */
async function rotateMasterKeyCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({ args, options: { 'new-key': { type: 'string' } }, strict: true });
  const raw = values['new-key'] ?? env.AGENTRT_NEW_MASTER_KEY;
  if (!raw) throw new UsageError('rotate-master-key needs --new-key BASE64 or AGENTRT_NEW_MASTER_KEY');
  const newKey = Buffer.from(raw, 'base64');
  if (newKey.length !== 32) throw new UsageError('the new master key must be the base64 of exactly 32 bytes');
  const config = loadConfig(env);
  const current = await loadMasterKey({ configured: config.masterKey, dataDir: config.dataDir });
  const database = await openDatabase(config, stderrLogger(config));
  try {
    const result = await rotateMasterKey(database.dataSource, current.key, newKey);
    if (current.file) await replaceMasterKeyFile(current.file, newKey);
    const next = current.file ? `replaced ${current.file} with the new key` : 'now set AGENTRT_MASTER_KEY to the new key on every node';
    process.stdout.write(`rewrapped ${result.rewrapped} workspace data keys (${result.alreadyCurrent} already under the new key); ${next}\n`);
  } finally {
    await database.close();
  }
  return ExitCode.OK;
}

/** The version in agentrt's package.json, the nearest one above this file (from src/ or dist/src/). */
function packageVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    if (path.dirname(dir) === dir) throw new CommandError(`no package.json above ${__dirname}`);
  }
}

function stderrLogger(config: Config): Logger {
  return createLogger({ level: config.logLevel, format: config.logFormat, fd: 2 });
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => process.exit(reportFailure(error)),
  );
}
