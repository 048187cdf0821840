// What `agentrt serve` prints, run as a person would: on a terminal (a
// pseudo-terminal) coloured one-line logs with local times and start-up lines
// saying where everything is; piped, or with LOG_FORMAT=json, JSON lines; probe
// and scrape requests at debug; no password or token in any of it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ulid } from 'ulid';
import { deleteStream } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { assertBuilt, useCliDataDir, cliEnv, runCli, startServe, startServeInTerminal, withoutColours, type LogLine, type ServeProcess } from './cli-process';

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const TOKEN_FILE = 'global-api-key.token';
/** The last start-up line: once the screen shows it, the node serves. */
const STOP_LINE = 'stop: Ctrl+C or SIGTERM';
/** A zone 5 h 45 min from UTC: a time printed in it is certainly local, not UTC. */
const ZONE = { name: 'Asia/Kathmandu', offsetMinutes: 5 * 60 + 45 };

/** Env of a person at a colour terminal in ZONE. */
function terminalEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env = cliEnv({ TZ: ZONE.name, TERM: 'xterm-256color', ...settings });
  delete env.NO_COLOR;
  return env;
}

function isJsonObject(line: string): boolean {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

/** The lines the node printed (the terminal's echo of the Ctrl+C typed, `^C`, is not the node's). */
function nonEmptyLines(text: string): string[] {
  return withoutColours(text).replace(/\^C/g, '').split('\n').filter((line) => line.trim() !== '');
}

/** Minutes between two times of day, around the clock (0 to 720). */
function minutesApart(a: number, b: number): number {
  const difference = Math.abs(a - b) % (24 * 60);
  return Math.min(difference, 24 * 60 - difference);
}

async function waitForLog(node: ServeProcess, matches: (line: LogLine) => boolean, what: string): Promise<LogLine> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const line = node.logs().find(matches);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the node did not log ${what}:\n${node.output().stdout}`);
}

describe('agentrt serve logs (embedded)', function () {
  this.timeout(120_000);
  const dataDir = useCliDataDir();

  describe('on a terminal, first start', () => {
    let screen: string;
    let exitCode: number | null;

    before(async () => {
      const node = await startServeInTerminal(terminalEnv({ AGENTRT_DATA_DIR: dataDir(), PORT: '0' }), STOP_LINE);
      exitCode = await node.interrupt();
      screen = node.screen();
    });

    it('prints coloured one-line logs, no JSON', () => {
      assert.match(screen, /\x1b\[\d+m/, 'no colour codes');
      const lines = nonEmptyLines(screen);
      assert.ok(lines.length >= 8, screen);
      assert.deepEqual(lines.filter(isJsonObject), []);
      assert.deepEqual(lines.filter((line) => !/^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN): /.test(line)), [], 'a line is not "[time] LEVEL: message"');
    });

    it('prints the local time', () => {
      const [, hours, minutes] = /^\[(\d\d):(\d\d)/.exec(nonEmptyLines(screen)[0])!;
      const now = new Date();
      const localNow = now.getUTCHours() * 60 + now.getUTCMinutes() + ZONE.offsetMinutes;
      assert.ok(minutesApart(Number(hours) * 60 + Number(minutes), localNow) <= 5, `${hours}:${minutes} is not the time in ${ZONE.name}`);
    });

    it('says where the API listens, the database and bus in use, where the new token is and how to stop', () => {
      const text = withoutColours(screen);
      assert.match(text, /INFO: listening on http:\/\/127\.0\.0\.1:\d+ \{"embedded":true,/);
      assert.equal(text.match(/listening/g)?.length, 1, `the address is given more than once:\n${text}`);
      assert.ok(text.includes(`INFO: database: embedded Postgres (PGlite) in ${path.join(dataDir(), 'pgdata')}\n`), text);
      assert.ok(text.includes('INFO: bus: in-process'), text);
      assert.ok(text.includes(`INFO: token: the first account's global API key token is in ${path.join(dataDir(), TOKEN_FILE)} (written now;`), text);
      assert.ok(text.includes(`INFO: ${STOP_LINE}`), text);
    });

    it('counts the migrations applied instead of naming each, and does not warn of private network access it does not allow', () => {
      const text = withoutColours(screen);
      assert.match(text, /INFO: \d+ migrations applied \{"count":\d+\}\n/);
      assert.doesNotMatch(text, /Foundation\d+/);
      assert.doesNotMatch(text, /AGENTRT_ALLOW_PRIVATE_NETWORK/);
    });

    it('never prints the token', async () => {
      const token = (await fs.readFile(path.join(dataDir(), TOKEN_FILE), 'utf8')).trim();
      assert.ok(!screen.includes(token));
    });

    it('stops on Ctrl+C with exit code 0', () => {
      assert.equal(exitCode, 0);
      assert.match(withoutColours(screen), /INFO: stopped\n/);
    });
  });

  describe('on a terminal with LOG_FORMAT=json, a later start', () => {
    let lines: string[];

    before(async () => {
      const node = await startServeInTerminal(terminalEnv({ AGENTRT_DATA_DIR: dataDir(), PORT: '0', LOG_FORMAT: 'json' }), `"msg":"${STOP_LINE}`);
      assert.equal(await node.interrupt(), 0);
      assert.doesNotMatch(node.screen(), /\x1b\[/);
      lines = nonEmptyLines(node.screen());
    });

    it('prints JSON lines', () => {
      assert.deepEqual(lines.filter((line) => !isJsonObject(line)), []);
    });

    it('says where the token written at first start is', () => {
      const messages = lines.map((line) => (JSON.parse(line) as LogLine).msg);
      assert.ok(messages.includes(`token: the first account's global API key token is in ${path.join(dataDir(), TOKEN_FILE)}`), messages.join('\n'));
    });
  });

  describe('piped, at LOG_LEVEL=debug, with AGENTRT_ALLOW_PRIVATE_NETWORK', () => {
    let node: ServeProcess;

    before(async () => {
      node = await startServe(cliEnv({ AGENTRT_DATA_DIR: dataDir(), PORT: '0', LOG_LEVEL: 'debug', AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' }));
    });

    it('warns that private network access is allowed', () => {
      const warnings = node.logs().filter((line) => line.level === 40 && String(line.msg).startsWith('AGENTRT_ALLOW_PRIVATE_NETWORK is on'));
      assert.equal(warnings.length, 1, node.output().stdout);
      assert.match(String(warnings[0].msg), /private, loopback and link-local addresses/);
    });

    after(async () => {
      await node?.stop('SIGKILL');
    });

    it('prints JSON lines carrying the start-up sentences', async () => {
      await waitForLog(node, (line) => String(line.msg).startsWith(STOP_LINE), 'how to stop');
      const lines = node.output().stdout.split('\n').filter((line) => line !== '');
      assert.deepEqual(lines.filter((line) => !isJsonObject(line)), []);
      assert.ok(node.logs().some((line) => line.msg === 'listening' && line.url === node.url));
    });

    it('logs /healthz, /readyz and /metrics requests at debug and the others at info', async () => {
      for (const route of ['/healthz', '/readyz', '/metrics', '/v1/account']) await (await fetch(`${node.url}${route}`)).arrayBuffer();
      const levelOf = async (route: string) => (await waitForLog(node, (line) => line.msg === 'request' && line.route === route, `the request to ${route}`)).level;
      assert.deepEqual(
        { healthz: await levelOf('/healthz'), readyz: await levelOf('/readyz'), metrics: await levelOf('/metrics'), account: await levelOf('/v1/account') },
        { healthz: 20, readyz: 20, metrics: 20, account: 30 },
      );
    });
  });

  it('refuses a LOG_FORMAT other than pretty or json, naming the variable', async () => {
    const result = await runCli(['serve'], cliEnv({ AGENTRT_DATA_DIR: dataDir(), PORT: '0', LOG_FORMAT: 'text' }));
    assert.equal(result.code, 1);
    assert.match(result.stderr, /LOG_FORMAT must be pretty or json, got "text"/);
  });
});

describe('agentrt serve logs (Postgres and NATS with credentials)', function () {
  this.timeout(120_000);
  const POSTGRES_PASSWORD = 'pg-pass-in-url';
  const NATS_PASSWORD = 'nats-pass-in-url';
  let database: TestDatabase;
  let dataDir: string;
  let eventStream: string;
  let node: ServeProcess | undefined;

  before(async () => {
    assertBuilt();
    database = await createTestDatabase();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-e2e-'));
    const suffix = ulid().toLowerCase();
    eventStream = `E2E_${suffix.toUpperCase()}`;
    const databaseUrl = new URL(database.url);
    databaseUrl.password = POSTGRES_PASSWORD;
    const natsUrl = new URL(NATS_URL);
    natsUrl.username = 'agentrt';
    natsUrl.password = NATS_PASSWORD;
    node = await startServe(cliEnv({
      DATABASE_URL: databaseUrl.toString(),
      NATS_URL: natsUrl.toString().replace(/\/$/, ''),
      AGENTRT_MASTER_KEY: randomBytes(32).toString('base64'),
      AGENTRT_SUBJECT_PREFIX: `e2e_${suffix}`,
      AGENTRT_EVENT_STREAM: eventStream,
      AGENTRT_SHARD_COUNT: '8',
      AGENTRT_DATA_DIR: dataDir,
      PORT: '0',
    }));
    await waitForLog(node, (line) => String(line.msg).startsWith(STOP_LINE), 'how to stop');
  });

  after(async () => {
    await node?.stop('SIGKILL');
    await fs.rm(dataDir, { recursive: true, force: true });
    if (eventStream) await deleteStream(eventStream);
    await database?.drop();
  });

  it('names the Postgres server and database and the NATS server, without their passwords', () => {
    const messages = node!.logs().map((line) => line.msg);
    const postgres = new URL(database.url);
    assert.ok(messages.includes(`database: Postgres at ${postgres.host}, database ${database.name}`), messages.join('\n'));
    assert.ok(messages.includes(`bus: NATS at ${NATS_URL.replace('//', '//***@')}`), messages.join('\n'));
  });

  it('prints neither password anywhere', () => {
    const { stdout, stderr } = node!.output();
    for (const secret of [POSTGRES_PASSWORD, NATS_PASSWORD]) assert.ok(!`${stdout}${stderr}`.includes(secret), `${secret} was printed`);
  });
});
