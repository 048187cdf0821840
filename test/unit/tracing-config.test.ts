// Tracing's configuration from the standard OTEL_* variables
// (src/tracing/tracing-config.ts, through loadConfig): off unless an OTLP
// endpoint is set, the defaults the specification names, and a ConfigError
// naming the variable for a bad value, never repeating a header's value.
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config';
import { endpointForLogs, tracingConfig } from '../../src/tracing/tracing-config';
import { isTraceparent, traceIdOf, traceparentField } from '../../src/tracing/trace-context';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

function refused(env: Record<string, string>, variable: string, secret?: string): void {
  assert.throws(() => loadConfig(env), (error: unknown) => {
    assert.ok(error instanceof ConfigError, String(error));
    assert.ok(error.message.includes(variable), `${error.message} names ${variable}`);
    if (secret) assert.ok(!error.message.includes(secret), `${error.message} keeps the value to itself`);
    return true;
  }, JSON.stringify(env));
}

describe('tracing configuration (OTEL_*)', () => {
  it('is off without an OTLP endpoint, with OTEL_SDK_DISABLED=true and with OTEL_TRACES_EXPORTER=none', () => {
    assert.equal(loadConfig({}).tracing, undefined);
    assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }).tracing, undefined);
    assert.equal(loadConfig({ ...ENDPOINT, OTEL_SDK_DISABLED: 'true' }).tracing, undefined);
    assert.equal(loadConfig({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }).tracing, undefined);
  });

  it('defaults to http/protobuf, service agentrt, parent-based always-on sampling, traces at <endpoint>/v1/traces', () => {
    const tracing = loadConfig(ENDPOINT).tracing!;
    assert.equal(tracing.url, 'http://collector:4318/v1/traces');
    assert.equal(tracing.protocol, 'http/protobuf');
    assert.equal(tracing.serviceName, 'agentrt');
    assert.deepEqual(tracing.sampler, { name: 'parentbased_always_on', ratio: 1 });
    assert.deepEqual(tracing.headers, {});
    assert.equal(tracing.compression, 'none');
    assert.equal(tracing.timeoutMs, 10_000);
    assert.deepEqual(tracing.batch, { scheduledDelayMs: 5000, exportTimeoutMs: 30_000, maxQueueSize: 2048, maxExportBatchSize: 512 });
  });

  it('appends /v1/traces to the base endpoint, and takes OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given', () => {
    assert.equal(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/base/' })!.url, 'https://otel.example.com/base/v1/traces');
    assert.equal(tracingConfig({ ...ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other:9999/traces' })!.url, 'http://other:9999/traces');
    assert.equal(tracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other:9999/traces' })!.url, 'http://other:9999/traces');
  });

  it('reads the protocol, headers (percent-decoded, the traces ones over the general ones), resource, sampler and batch settings', () => {
    const tracing = tracingConfig({
      ...ENDPOINT,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-tenant = one',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=two',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,deployment.environment.name=prod%2Deu',
      OTEL_SERVICE_NAME: 'agentrt-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    })!;
    assert.equal(tracing.protocol, 'http/json');
    assert.deepEqual(tracing.headers, { authorization: 'Bearer abc', 'x-tenant': 'two' });
    assert.equal(tracing.compression, 'gzip');
    assert.equal(tracing.timeoutMs, 2500);
    assert.equal(tracing.serviceName, 'agentrt-eu', 'OTEL_SERVICE_NAME wins over the resource attribute');
    assert.equal(tracing.resourceAttributes['deployment.environment.name'], 'prod-eu');
    assert.deepEqual(tracing.sampler, { name: 'parentbased_traceidratio', ratio: 0.25 });
    assert.equal(tracing.batch.scheduledDelayMs, 200);
    assert.equal(tracingConfig({ ...ENDPOINT, OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource' })!.serviceName, 'from-resource');
  });

  it('refuses a protocol other than http/protobuf or http/json, naming the variable that set it', () => {
    refused({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL');
    refused({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'json' }, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL');
  });

  it('refuses a malformed endpoint, and one carrying credentials without repeating them', () => {
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT');
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' }, 'OTEL_EXPORTER_OTLP_ENDPOINT');
    refused({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://user:hunter2@collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT', 'hunter2');
  });

  it('refuses malformed headers by position, never quoting a value', () => {
    refused({ ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer s3cret,broken' }, 'OTEL_EXPORTER_OTLP_HEADERS', 's3cret');
    refused({ ...ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=%E0%A4%A' }, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', '%E0%A4%A');
    refused({ ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: 'bad header=s3cret' }, 'OTEL_EXPORTER_OTLP_HEADERS', 's3cret');
  });

  it('refuses other bad values, naming the variable', () => {
    refused({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER');
    refused({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER');
    refused({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG');
    refused({ ...ENDPOINT, OTEL_EXPORTER_OTLP_COMPRESSION: 'brotli' }, 'OTEL_EXPORTER_OTLP_COMPRESSION');
    refused({ ...ENDPOINT, OTEL_EXPORTER_OTLP_TIMEOUT: '0' }, 'OTEL_EXPORTER_OTLP_TIMEOUT');
    refused({ ...ENDPOINT, OTEL_BSP_SCHEDULE_DELAY: 'soon' }, 'OTEL_BSP_SCHEDULE_DELAY');
    refused({ ...ENDPOINT, OTEL_RESOURCE_ATTRIBUTES: '=value' }, 'OTEL_RESOURCE_ATTRIBUTES');
  });
});

describe('the traces endpoint in logs', () => {
  it('shows the address without its query, which may hold a collector token', () => {
    assert.equal(endpointForLogs('https://collector.example:4318/v1/traces?token=s3cret&x=1'), 'https://collector.example:4318/v1/traces?***');
    assert.equal(endpointForLogs('http://127.0.0.1:4318/v1/traces'), 'http://127.0.0.1:4318/v1/traces');
  });
});

describe('W3C traceparent values', () => {
  it('accepts version 00 with non-zero ids only, and gives the trace id', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    assert.ok(isTraceparent(traceparent));
    assert.equal(traceIdOf(traceparent), '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.deepEqual(traceparentField(traceparent), { traceparent });
    for (const bad of [
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', 'nonsense', 42, undefined,
    ]) {
      assert.equal(isTraceparent(bad), false, String(bad));
      assert.deepEqual(traceparentField(bad), {});
    }
    assert.equal(traceIdOf(undefined), undefined);
  });
});
