// The built `agentrt` command's one-shot subcommands: bootstrap against a real
// Postgres database (the --json shape, its token accepted by a node on that
// database), migrate, cluster status (against a fake node, and against an
// embedded node with its token file), --version, --help and the README's list
// of commands, and start-up checks that fail closed.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { COMMAND_NAMES } from '../../src/cli';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { assertBuilt, useCliDataDir, cliEnv, runCli, startServe, type ServeProcess } from './cli-process';

const ROOT = path.resolve(__dirname, '../..');

/** A port nothing listens on (just freed by the OS). */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

type Created = { accountId: string; workspaceId: string; profileId: string; globalApiKey: { id: string; token: string } };

describe('agentrt bootstrap --json (Postgres)', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let node: ServeProcess | undefined;

  before(async () => {
    assertBuilt();
    database = await createTestDatabase();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-e2e-'));
    env = cliEnv({ DATABASE_URL: database.url, AGENTRT_DATA_DIR: dataDir, AGENTRT_MASTER_KEY: randomBytes(32).toString('base64'), PORT: '0' });
  });

  after(async () => {
    await node?.stop('SIGKILL');
    await fs.rm(dataDir, { recursive: true, force: true });
    await database.drop();
  });

  describe('when given an account name and an email', () => {
    let created: Created;

    before(async () => {
      const result = await runCli(['bootstrap', '--account', 'acme', '--email', 'admin@acme.test', '--json'], env);
      assert.equal(result.code, 0, result.stderr);
      created = JSON.parse(result.stdout) as Created;
    });

    it('prints exactly one JSON object with the new ids and the global key', () => {
      assert.deepEqual(Object.keys(created).sort(), ['accountId', 'globalApiKey', 'profileId', 'workspaceId']);
      assert.deepEqual(Object.keys(created.globalApiKey).sort(), ['id', 'token']);
      for (const value of [created.accountId, created.workspaceId, created.profileId, created.globalApiKey.id]) {
        assert.equal(typeof value, 'string');
        assert.notEqual(value, '');
      }
      assert.match(created.globalApiKey.id, /^apikey_/);
      assert.match(created.globalApiKey.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    });

    it('issues a token that a node on the same database accepts', async () => {
      node = await startServe(env);
      const response = await fetch(`${node.url}/v1/account`, { headers: { authorization: `Bearer ${created.globalApiKey.token}` } });
      const body = (await response.json()) as { metadata?: { id?: string } };
      assert.equal(response.status, 200, JSON.stringify(body));
      assert.equal(body.metadata?.id, created.accountId);
    });

    it('keeps the node from bootstrapping an account of its own', async () => {
      await assert.rejects(fs.access(path.join(dataDir, 'global-api-key.token')), { code: 'ENOENT' });
      assert.deepEqual(await node!.stop('SIGTERM'), { code: 0, signal: null });
      node = undefined;
    });

    it('refuses to serve with another master key than the database was created with', async () => {
      const result = await runCli(['serve'], { ...env, AGENTRT_MASTER_KEY: randomBytes(32).toString('base64') });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /the master key does not open the keys stored in this database/);
    });
  });

  describe('when --email is not an email address', () => {
    it('exits 1 naming the field, without a stack trace', async () => {
      const result = await runCli(['bootstrap', '--account', 'acme', '--email', 'not-an-email', '--json'], env);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '');
      assert.equal(result.stderr.trim().split('\n').pop(), 'agentrt: email: "not-an-email" is not an email address');
    });
  });

  describe('when --email is missing', () => {
    it('exits 2 with the usage text and prints nothing on stdout', async () => {
      const result = await runCli(['bootstrap', '--account', 'acme', '--json'], env);
      assert.equal(result.code, 2);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /bootstrap needs --email EMAIL/);
    });
  });
});

describe('agentrt serve start-up checks', function () {
  this.timeout(60_000);
  const dataDir = useCliDataDir();

  it('refuses a malformed AGENTRT_MASTER_KEY with a message naming it', async () => {
    const result = await runCli(['serve'], cliEnv({ AGENTRT_DATA_DIR: dataDir(), AGENTRT_MASTER_KEY: 'too-short', PORT: '0' }));
    assert.equal(result.code, 1);
    assert.match(result.stderr, /AGENTRT_MASTER_KEY must be the base64 of exactly 32 bytes/);
  });

  it('refuses NATS_URL without DATABASE_URL (leases need real Postgres)', async () => {
    const result = await runCli(['serve'], cliEnv({ AGENTRT_DATA_DIR: dataDir(), NATS_URL: 'nats://127.0.0.1:4222', PORT: '0' }));
    assert.equal(result.code, 1);
    assert.match(result.stderr, /NATS_URL needs DATABASE_URL/);
  });

  it('names DATABASE_URL and the Postgres address, without the password or a stack, when Postgres does not answer', async () => {
    const port = await closedPort();
    const result = await runCli(['serve'], cliEnv({ AGENTRT_DATA_DIR: dataDir(), DATABASE_URL: `postgres://agentrt:s3cret@127.0.0.1:${port}/agentrt`, PORT: '0' }));
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      `agentrt: cannot connect to Postgres at 127.0.0.1:${port}, database agentrt (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:${port}\n`,
    );
  });

  describe('when NATS does not answer', () => {
    let database: TestDatabase;

    before(async () => {
      database = await createTestDatabase();
    });

    after(async () => {
      await database.drop();
    });

    it('names NATS_URL and the server address, without its password or a stack', async () => {
      const port = await closedPort();
      const result = await runCli(['serve'], cliEnv({
        AGENTRT_DATA_DIR: dataDir(), DATABASE_URL: database.url, NATS_URL: `nats://agentrt:s3cret@127.0.0.1:${port}`, AGENTRT_MASTER_KEY: randomBytes(32).toString('base64'), PORT: '0',
      }));
      assert.equal(result.code, 1);
      assert.equal(result.stderr, `agentrt: cannot connect to NATS at nats://***@127.0.0.1:${port} (NATS_URL): connection refused\n`);
    });
  });

  it('refuses a malformed master.key file instead of replacing it', async () => {
    const file = path.join(dataDir(), 'master.key');
    await fs.writeFile(file, 'not a key\n', { mode: 0o600 });
    const result = await runCli(['serve'], cliEnv({ AGENTRT_DATA_DIR: dataDir(), PORT: '0' }));
    assert.equal(result.code, 1);
    assert.match(result.stderr, /master\.key does not hold a valid master key/);
    assert.equal(await fs.readFile(file, 'utf8'), 'not a key\n');
  });
});

describe('agentrt migrate (embedded)', function () {
  this.timeout(60_000);
  const dataDir = useCliDataDir();

  it('applies every migration to a new data folder, then finds none pending', async () => {
    const first = await runCli(['migrate'], cliEnv({ AGENTRT_DATA_DIR: dataDir() }));
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^applied Foundation\d+$/m);
    const second = await runCli(['migrate'], cliEnv({ AGENTRT_DATA_DIR: dataDir() }));
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, 'no pending migrations\n');
  });
});

describe('agentrt cluster status', function () {
  this.timeout(30_000);
  let server: http.Server;
  let url: string;
  const seen: Array<{ path?: string; authorization?: string }> = [];
  const heartbeat = new Date().toISOString();
  // 16 shards: node-a owns 0-5 and 8, node-b 9-13; 6, 7, 14 and 15 have no live owner.
  const cluster = {
    shardCount: 16,
    nodes: [
      { id: 'node-a', lastHeartbeatAt: heartbeat, shards: [0, 1, 2, 3, 4, 5, 8], activeActors: 12 },
      { id: 'node-b', lastHeartbeatAt: heartbeat, shards: [9, 10, 11, 12, 13], activeActors: 3 },
    ],
  };

  before(async () => {
    assertBuilt();
    server = http.createServer((request, response) => {
      seen.push({ path: request.url, authorization: request.headers.authorization });
      const ok = request.headers.authorization === 'Bearer good-token';
      response.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      response.end(JSON.stringify(ok ? cluster : { code: 16, message: 'invalid bearer token' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('prints a line per node with its shards as ranges, and the shards no live node owns, sending the token from AGENTRT_TOKEN', async () => {
    const result = await runCli(['cluster', 'status', '--url', url], cliEnv({ AGENTRT_TOKEN: 'good-token' }));
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n').map((line) => line.trimEnd().split(/\s{2,}/));
    assert.deepEqual(lines, [
      ['16 shards on 2 live nodes'],
      ['NODE', 'SHARDS', 'ACTORS', 'HEARTBEAT', 'RANGES'],
      ['node-a', '7', '12', lines[2][3], '0-5,8'],
      ['node-b', '5', '3', lines[3][3], '9-13'],
      ['(no live owner)', '4', '-', '-', '6-7,14-15'],
    ]);
    for (const age of [lines[2][3], lines[3][3]]) assert.match(age, /^\d+ s ago$/);
    assert.deepEqual(seen.at(-1), { path: '/v1/cluster', authorization: 'Bearer good-token' });
  });

  it('prints the JSON of GET /v1/cluster with --json', async () => {
    const result = await runCli(['cluster', 'status', '--url', url, '--json', '--token', 'good-token'], cliEnv({}));
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), cluster);
  });

  it('exits 1 with the status, where the token came from and the body when the node refuses', async () => {
    const result = await runCli(['cluster', 'status', '--token', 'bad-token'], cliEnv({ AGENTRT_URL: url }));
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /GET \/v1\/cluster answered 401 \(the token came from --token\): .*invalid bearer token/);
    const fromEnv = await runCli(['cluster', 'status'], cliEnv({ AGENTRT_URL: url, AGENTRT_TOKEN: 'bad-token' }));
    assert.match(fromEnv.stderr, /answered 401 \(the token came from AGENTRT_TOKEN\)/);
  });

  describe('given a node by --url or AGENTRT_URL and no token', () => {
    let dataDir: string;

    before(async () => {
      // This machine's token file: its global API key must not go to another node.
      dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-e2e-'));
      await fs.writeFile(path.join(dataDir, 'global-api-key.token'), 'local-global-key\n', { mode: 0o600 });
    });

    after(async () => {
      await fs.rm(dataDir, { recursive: true, force: true });
    });

    for (const [how, args, settings] of [
      ['--url', ['--url', 'URL'], {}],
      ['AGENTRT_URL', [], { AGENTRT_URL: 'URL' }],
    ] as const) {
      it(`sends nothing to the node named by ${how}, and exits 1 asking for --token or AGENTRT_TOKEN`, async () => {
        const requestsBefore = seen.length;
        const given = Object.fromEntries(Object.entries(settings).map(([name, value]) => [name, value.replace('URL', url)]));
        const result = await runCli(['cluster', 'status', ...args.map((arg) => arg.replace('URL', url))], cliEnv({ AGENTRT_DATA_DIR: dataDir, ...given }));
        assert.equal(result.code, 1, result.stderr);
        assert.deepEqual(seen.slice(requestsBefore), []);
        assert.ok(!seen.some((request) => request.authorization?.includes('local-global-key')), 'the local token reached the remote node');
        const message = result.stderr.trim();
        assert.match(message, new RegExp(`^agentrt: cluster status needs --token TOKEN or AGENTRT_TOKEN to ask ${url} \\(${how}\\)`));
        assert.match(message, /only to the local node, http:\/\/127\.0\.0\.1:\$PORT/);
        assert.doesNotMatch(message, /Usage:/);
      });
    }
  });

  it('exits 1 naming every way to give a token when there is none, nor a token file, without the usage text', async () => {
    const result = await runCli(['cluster', 'status'], cliEnv({ AGENTRT_DATA_DIR: path.join(os.tmpdir(), 'agentrt-no-such-folder') }));
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^agentrt: cluster status needs --token TOKEN, AGENTRT_TOKEN or the token file .*agentrt-no-such-folder\/global-api-key\.token/);
    assert.doesNotMatch(result.stderr, /Usage:/);
  });
});

describe('agentrt cluster status on an embedded node', function () {
  this.timeout(60_000);
  let dataDir: string;
  let node: ServeProcess | undefined;

  before(async () => {
    assertBuilt();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-e2e-'));
    node = await startServe(cliEnv({ AGENTRT_DATA_DIR: dataDir, PORT: '0' }));
  });

  after(async () => {
    await node?.stop('SIGKILL');
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('reads the token file the node wrote (no --url: the local node on PORT), and prints its 256 shards as one range', async () => {
    const result = await runCli(['cluster', 'status'], cliEnv({ AGENTRT_DATA_DIR: dataDir, PORT: new URL(node!.url).port }));
    assert.equal(result.code, 0, result.stderr);
    const nodeId = String(node!.logs().find((line) => line.msg === 'listening')?.nodeId);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 3, result.stdout);
    assert.equal(lines[0], '256 shards on 1 live node');
    assert.match(lines[2], new RegExp(`^${nodeId}\\s+256\\s+\\d+\\s+\\d+ s ago\\s+0-255$`));
  });
});

describe('agentrt --version', () => {
  before(assertBuilt);

  it('prints the version of package.json, also as -v', async () => {
    const { version } = JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const result = await runCli([flag], cliEnv({}));
      assert.deepEqual({ code: result.code, stdout: result.stdout }, { code: 0, stdout: `${version}\n` }, flag);
    }
  });
});

describe('agentrt --help', () => {
  let help: string;
  /** Each command line of the usage text, as its names: `cluster status`, or `help`, `--help`, `-h`. */
  let listed: string[][];

  before(async () => {
    assertBuilt();
    const result = await runCli(['--help'], cliEnv({}));
    assert.equal(result.code, 0, result.stderr);
    help = result.stdout;
    listed = help
      .split('\n')
      .map((line) => /^ {2}([a-z][\w-]* [a-z][\w-]*|[a-z][\w-]*(?:, -{1,2}[a-z][\w-]*)*)(?= |$)/.exec(line)?.[1])
      .filter((names): names is string => names !== undefined)
      .map((names) => names.split(', '));
  });

  it('lists every command, and help and version', () => {
    const first = listed.map((names) => names[0].split(' ')[0]);
    for (const command of [...COMMAND_NAMES, 'help', 'version']) assert.ok(first.includes(command), `--help does not list ${command}:\n${help}`);
    assert.deepEqual(listed.find((names) => names[0] === 'version'), ['version', '--version', '-v']);
  });

  it('gives the default node URL that docs/operations.md gives', async () => {
    const operations = await fs.readFile(path.join(ROOT, 'docs/operations.md'), 'utf8');
    assert.ok(operations.includes('`http://127.0.0.1:$PORT`'));
    assert.ok(help.includes('http://127.0.0.1:$PORT'), help);
  });

  it('is printed after a command too (exit 0), as for agentrt serve --help and cluster status --help', async () => {
    for (const args of [['serve', '--help'], ['cluster', 'status', '--help'], ['bootstrap', '-h']]) {
      const result = await runCli(args, cliEnv({}));
      assert.deepEqual({ code: result.code, stdout: result.stdout, stderr: result.stderr }, { code: 0, stdout: help, stderr: '' }, args.join(' '));
    }
  });

  it('lists only commands that run', async () => {
    for (const names of listed) {
      const result = await runCli([...names[0].split(' '), '--no-such-option'], cliEnv({}));
      assert.doesNotMatch(result.stderr, /unknown command/, names[0]);
    }
  });

  it('is matched by the README, which names every command it lists', async () => {
    const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
    for (const names of listed) assert.ok(names.some((name) => readme.includes(`\`agentrt ${name}\``)), `README.md does not list agentrt ${names.join(' / ')}`);
  });
});
