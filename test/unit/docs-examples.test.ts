// The docs' examples and names against the code they describe: ids written out
// in full have the shape src/ids.ts makes, the NATS consumer example reads the
// stream objective events are published on with a real account id and is saved
// as the ES module it is (.mjs, checked by node --check), api.md and
// operations.md name that stream, and docker-compose.yml and the NATS cluster
// example (docs/examples/docker-compose.nats-cluster.yml) wait for healthy
// dependencies, restart and say where each node is reached.
// (docs/examples/webhook-receiver.mjs is run by test/webhooks/receiver-example.test.ts.)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { IdPrefix, isId, type IdKind } from '../../src/ids';
import { OBJECTIVE_STREAMS } from '../../src/objectives/objective.behavior';
import { OBJECTIVE_EVENTS_STREAM, objectiveEventsFilter } from '../../src/objectives/objective-events';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const DOCUMENTS = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const KIND_OF_PREFIX = new Map<string, IdKind>(Object.entries(IdPrefix).map(([kind, prefix]) => [prefix, kind as IdKind]));

/** The text of `document` from the heading `title` to the next heading of any level. */
function section(document: string, title: string): string {
  const text = read(document);
  const start = text.indexOf(`${title}\n`);
  assert.ok(start >= 0, `${document} has a section "${title}"`);
  const end = text.slice(start + title.length).search(/\n#{1,6} /);
  return end < 0 ? text.slice(start) : text.slice(start, start + title.length + end);
}

describe('docs against the code', () => {
  it('writes every id in full with the shape src/ids.ts makes (prefix, then a ULID)', () => {
    const malformed = DOCUMENTS.flatMap((file) =>
      [...read(file).matchAll(/\b([a-z]+)_([0-9A-Za-z]{20,})\b/g)]
        .filter(([, prefix]) => KIND_OF_PREFIX.has(prefix))
        .filter(([id, prefix]) => !isId(KIND_OF_PREFIX.get(prefix)!, id))
        .map(([id]) => `${file}: ${id}`));
    assert.deepEqual(malformed, [], 'an id in the docs that the API would refuse as malformed');
  });

  it('has the NATS consumer example read the objective events\' stream, filtered on a real account id', () => {
    const example = /```js\n([\s\S]*?)```/.exec(section('docs/api.md', '### Reading the events from NATS instead'))?.[1] ?? '';
    const streams = [...example.matchAll(/consumers\.(?:add|get)\('([^']+)'/g)].map((match) => match[1]);
    assert.deepEqual(streams, [OBJECTIVE_EVENTS_STREAM.name, OBJECTIVE_EVENTS_STREAM.name]);
    const filter = /filter_subject: '([^']+)'/.exec(example)?.[1] ?? '';
    const [prefix, account, rest] = filter.split('.');
    assert.equal(`${prefix}.>`, OBJECTIVE_EVENTS_STREAM.subjects[0], filter);
    assert.ok(isId('account', account), `${account} is an account id as GET /v1/account answers it (acc_<ULID>)`);
    assert.equal(rest, '>', filter);
  });

  it('has the NATS consumer example saved as the ES module it is, and valid as one', () => {
    const text = section('docs/api.md', '### Reading the events from NATS instead');
    const example = /```js\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
    const file = /save it as `([^`]+)`/.exec(text)?.[1] ?? '';
    assert.match(file, /\.mjs$/, 'import and top-level await need an ES module: a .mjs file');
    assert.match(text, new RegExp(`\`node ${file.replace('.', '\\.')}\``));
    const directory = mkdtempSync(path.join(tmpdir(), 'nats-consumer-'));
    try {
      writeFileSync(path.join(directory, file), example);
      const check = spawnSync(process.execPath, ['--check', path.join(directory, file)], { encoding: 'utf8' });
      assert.equal(check.status, 0, check.stderr);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('names in api.md and operations.md the stream and subjects the objective kind publishes on', () => {
    assert.deepEqual(OBJECTIVE_STREAMS, [OBJECTIVE_EVENTS_STREAM], 'objective events have one stream');
    const tokens = objectiveEventsFilter({ accountId: 'a', workspaceId: 'w', agentId: 'g', objectiveId: 'o' }).split('.').length;
    const subject = new RegExp(`objective_events${'\\.<[A-Za-z ]+>'.repeat(tokens - 1)}`);
    const api = section('docs/api.md', '### Reading the events from NATS instead');
    assert.match(api, new RegExp(`stream\\s+\`${OBJECTIVE_EVENTS_STREAM.name}\`, subject\\s+\`${subject.source}\``));
    const operations = section('docs/operations.md', '## Several clusters on one NATS server');
    assert.match(operations, new RegExp(`\`${OBJECTIVE_EVENTS_STREAM.name}\` and its subjects\\s+\\(\`${subject.source}\`\\)`));
    const ownStream = read('docs/operations.md').split('\n').find((line) => line.startsWith('| `AGENTRT_EVENT_STREAM` |')) ?? '';
    assert.match(ownStream, new RegExp(`Objective events are not there: they are on \`${OBJECTIVE_EVENTS_STREAM.name}\``));
  });
});

interface ComposeService {
  image?: string;
  command?: string[];
  restart?: string;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  ports?: string[];
}

describe('docker-compose.yml', () => {
  const services = (parse(read('docker-compose.yml')) as { services: Record<string, ComposeService> }).services;

  it('gives NATS a health check the image can run: its monitoring port\'s /healthz', () => {
    const { command = [], healthcheck, image } = services.nats;
    assert.deepEqual(command.slice(command.indexOf('-m'), command.indexOf('-m') + 2), ['-m', '8222']);
    assert.ok(command.includes('-js'), 'JetStream on');
    assert.match(String(image), /^nats:2\.9-alpine$/, 'the Alpine image, whose wget runs the check (the default image holds the server binary alone)');
    assert.deepEqual(healthcheck?.test, ['CMD', 'wget', '-q', '-O', '/dev/null', 'http://127.0.0.1:8222/healthz']);
  });

  it('starts the node once Postgres and NATS are healthy', () => {
    assert.ok(services.postgres.healthcheck, 'Postgres has a health check');
    assert.deepEqual(services.agentrt.depends_on, { postgres: { condition: 'service_healthy' }, nats: { condition: 'service_healthy' } });
  });

  it('restarts every service unless it was stopped', () => {
    assert.deepEqual(Object.fromEntries(Object.entries(services).map(([name, service]) => [name, service.restart])), {
      postgres: 'unless-stopped', nats: 'unless-stopped', agentrt: 'unless-stopped',
    });
  });

  it('sets AGENTRT_PUBLIC_URL, by default to the port it publishes', () => {
    const publicUrl = services.agentrt.environment?.AGENTRT_PUBLIC_URL ?? '';
    const fallback = /^\$\{AGENTRT_PUBLIC_URL:-([^}]+)\}$/.exec(publicUrl)?.[1];
    assert.ok(fallback, `${publicUrl}: the environment's value, else a default`);
    const published = services.agentrt.ports?.map((mapping) => mapping.split(':')[0]);
    assert.deepEqual(published, [new URL(fallback).port]);
  });
});

describe('docs/examples/docker-compose.nats-cluster.yml', () => {
  // Merge keys (<<) as compose applies them: the file shares the nodes' and servers' settings through anchors.
  const services = (parse(read('docs/examples/docker-compose.nats-cluster.yml'), { merge: true }) as { services: Record<string, ComposeService> }).services;
  const natsServers = ['nats-1', 'nats-2', 'nats-3'];
  const nodes = ['agentrt-1', 'agentrt-2'];

  it('restarts every service unless it was stopped, as docker-compose.yml does', () => {
    for (const [name, service] of Object.entries(services)) assert.equal(service.restart, 'unless-stopped', name);
  });

  it('gives every NATS server the health check of docker-compose.yml, and starts the nodes once all are healthy', () => {
    const single = parse(read('docker-compose.yml')).services.nats as ComposeService;
    for (const name of natsServers) {
      const { command = [], healthcheck, image } = services[name];
      assert.equal(image, single.image, name);
      assert.deepEqual(healthcheck, single.healthcheck, name);
      assert.deepEqual(command.slice(0, 2), ['nats-server', '-js'], name);
      assert.deepEqual(command.slice(command.indexOf('-m'), command.indexOf('-m') + 2), ['-m', '8222'], name);
    }
    for (const name of nodes) {
      assert.deepEqual(services[name].depends_on, Object.fromEntries(['postgres', ...natsServers].map((dependency) => [dependency, { condition: 'service_healthy' }])), name);
    }
  });

  it('sets each node\'s AGENTRT_PUBLIC_URL, by default to the port it publishes', () => {
    for (const name of nodes) {
      const publicUrl = services[name].environment?.AGENTRT_PUBLIC_URL ?? '';
      const fallback = /^\$\{AGENTRT_PUBLIC_URL:-([^}]+)\}$/.exec(publicUrl)?.[1];
      assert.ok(fallback, `${name}: ${publicUrl}: the environment's value, else a default`);
      assert.deepEqual(services[name].ports?.map((mapping) => mapping.split(':')[0]), [new URL(fallback).port], name);
      assert.equal(services[name].environment?.AGENTRT_JETSTREAM_REPLICAS, '3', `${name} keeps the shared environment`);
    }
  });
});
