// Prometheus request metrics: count and latency by route template and code;
// the process's own (prom-client's defaults); the text of every metric for /metrics.
import type Koa from 'koa';
import { collectDefaultMetrics, Counter, Histogram, register } from 'prom-client';

function metric<T>(name: string, create: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? create();
}

const requests = metric(
  'agentrt_http_requests_total',
  () => new Counter({ name: 'agentrt_http_requests_total', help: 'HTTP requests by method, route and status code', labelNames: ['method', 'route', 'code'] }),
);
const latency = metric(
  'agentrt_http_request_duration_seconds',
  () =>
    new Histogram({
      name: 'agentrt_http_request_duration_seconds',
      help: 'HTTP request latency by method, route and status code',
      labelNames: ['method', 'route', 'code'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    }),
);

export function requestMetrics(): Koa.Middleware {
  return async function requestMetrics(ctx, next) {
    const stop = latency.startTimer();
    try {
      await next();
    } finally {
      // Unmatched paths share one label so scanners cannot blow up cardinality.
      const labels = { method: ctx.method, route: ctx.state.routePath ?? 'unmatched', code: String(ctx.status) };
      requests.inc(labels);
      stop(labels);
    }
  };
}

/** A series of prom-client's defaults: present once they are collected. */
const PROCESS_METRIC = 'process_cpu_user_seconds_total';

/**
 * Collects prom-client's default metrics (CPU, memory, heap spaces, event
 * loop lag and utilization, GC, handles, file descriptors, Node.js version),
 * once per process however many apps it makes.
 */
export function collectProcessMetrics(): void {
  if (register.getSingleMetric(PROCESS_METRIC)) return;
  collectDefaultMetrics();
}

/** The text exposition of every registered metric. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: register.contentType, body: await register.metrics() };
}
