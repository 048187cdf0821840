// A node started with OTEL_EXPORTER_OTLP_ENDPOINT (src/server.ts, in process,
// over a database of its own): it says tracing is on, and when it stops it
// flushes the spans still buffered, before its batch would have sent them,
// then leaves tracing off.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startNode, type NodeHandle } from '../../src/server';
import { tracingEnabled } from '../../src/tracing/tracing';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';

describe('a node with tracing on (src/server.ts)', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let otlp: OtlpReceiver;
  let dataDir: string;
  let node: NodeHandle | undefined;

  before(async () => {
    database = await createTestDatabase();
    otlp = await startOtlpReceiver();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-tracing-'));
  });

  after(async () => {
    await node?.stop();
    await otlp?.close();
    await database?.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('exports over OTLP and flushes what is buffered when it stops', async () => {
    const logs: string[] = [];
    const logger = createLogger({ level: 'info', destination: new Writable({ write(chunk, _encoding, done) { logs.push(String(chunk)); done(); } }) });
    const config = loadConfig({
      DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1', AGENTRT_DATA_DIR: dataDir, AGENTRT_MASTER_KEY: randomBytes(32).toString('base64'),
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'agentrt-node-test',
      // Ten minutes: only the flush at the stop can send the span before the test ends.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
    node = await startNode(config, { logger, shutdownGraceMs: 500, runtimeOptions: { shardCount: 4, drainTimeoutMs: 2000, handoffTimeoutMs: 1000 } });
    assert.ok(logs.some((line) => /tracing on/.test(line) && line.includes(`${otlp.url}/v1/traces`)), 'the node says where its spans go');
    const token = (await fs.readFile(path.join(dataDir, 'global-api-key.token'), 'utf8')).trim();
    const traceId = randomBytes(16).toString('hex');
    const response = await fetch(`${node.url}/v1/account`, { headers: { authorization: `Bearer ${token}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
    assert.equal(response.status, 200);
    assert.equal(otlp.spans().filter((span) => span.traceId === traceId).length, 0, 'still buffered');

    await node.stop();
    const [span] = otlp.spans().filter((span) => span.traceId === traceId);
    assert.equal(span?.name, 'GET /v1/account');
    assert.equal(span.resource['service.name'], 'agentrt-node-test');
    assert.equal(span.scope, 'agentrt');
    assert.equal(tracingEnabled(), false, 'tracing is off again once the node stopped');
  });
});
