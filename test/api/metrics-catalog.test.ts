// The node's metrics against what documents them (issue 27 item 5): after an
// objective with a tool call and its webhook deliveries on a cluster-mode
// node (real NATS and Postgres), every PromQL expression of the Grafana
// dashboard (docs/grafana/agentrt.json) names only series the node exports,
// every agentrt series is on the dashboard, and docs/operations.md's list of
// series is exactly what the node exports, with each one's type and labels.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { register } from 'prom-client';
import { startTestApi, type TestApi } from '../support/api';
import { created, createAgent, createTool, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { deleteStream, deleteWebhookIntakeDurables, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';
import { eventuallyValue } from '../support/eventually';
import { runObjective } from '../support/objective-runs';
import { parseScrape, type Scrape } from '../support/prometheus-text';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const ROOT = path.join(__dirname, '..', '..');

/** PromQL words that are not series: aggregation clauses, set operators, modifiers. */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/** The series names a PromQL expression reads: its identifiers less functions, keywords, label matchers, grouping labels and ranges. */
function seriesNamesOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w$.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const [, name, call] = match;
    if (!call && !KEYWORDS.has(name.toLowerCase())) names.add(name);
  }
  return [...names];
}

/** Every `expr` of the dashboard, with the title of its panel. */
function dashboardExpressions(): Array<{ panel: string; expr: string }> {
  const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'docs', 'grafana', 'agentrt.json'), 'utf8'));
  const found: Array<{ panel: string; expr: string }> = [];
  const walk = (node: unknown, panel: string): void => {
    if (Array.isArray(node)) return node.forEach((item) => walk(item, panel));
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    const title = typeof record.title === 'string' ? record.title : panel;
    if (typeof record.expr === 'string') found.push({ panel, expr: record.expr });
    for (const value of Object.values(record)) walk(value, title);
  };
  walk(dashboard, 'dashboard');
  return found;
}

interface DocumentedSeries {
  name: string;
  type: string;
  labels: string[];
}

/** The rows of docs/operations.md's table of series (section "Metrics"). */
function documentedSeries(): DocumentedSeries[] {
  const text = readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8');
  const section = text.slice(text.indexOf('\n## Metrics\n'), text.indexOf('\n## ', text.indexOf('\n## Metrics\n') + 1));
  const table = section.slice(section.indexOf('| Series | Type | Labels | Meaning |'));
  return table.split('\n').slice(2).filter((line) => line.startsWith('| `')).map((line) => {
    const [name, type, labels] = line.split('|').slice(1, 4).map((cell) => cell.trim());
    return { name: name.replace(/`/g, ''), type, labels: labels ? labels.split(',').map((label) => label.trim().replace(/`/g, '')) : [] };
  });
}

/** The label names a registered metric declares (its samples may not show them all yet). */
function declaredLabels(name: string): string[] {
  const metric = register.getSingleMetric(name) as unknown as { labelNames?: string[] } | undefined;
  return [...(metric?.labelNames ?? [])].sort();
}

describe('metrics catalog: the dashboard and docs/operations.md against a scrape', function () {
  this.timeout(60_000);
  const busNames = uniqueBusNames();
  let api: TestApi;
  let tools: TestToolServer;
  let receiver: WebhookReceiver;
  let scraped: Scrape;

  before(async () => {
    tools = await startTestToolServer();
    receiver = await startWebhookReceiver();
    api = await startTestApi({ runtime: busNames, natsUrl: TEST_NATS_URL, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    const ws = await workspaceFixture(api);
    const agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'charted' }, spec: { webhookEventsUrl: `${receiver.url}/charted` } })).metadata.id;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
    const echo = await createTool(api, ws.token, ws.workspaceId, { metadata: { name: 'echo' }, spec: { description: 'Echoes', http: { url: `${tools.url}/echo`, method: 'POST' } } });
    await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: echo.metadata.id });
    const run = await runObjective(api, ws, { agentId, initialMessage: 'CALL echo {"q":1}\nSAY done' });
    assert.equal(run.objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(run.objective.info));
    await eventuallyValue(async () => receiver.at('/charted').length >= run.events.length || undefined, 'the webhook deliveries');
    scraped = await eventuallyValue(async () => {
      const scrape = parseScrape((await api.request('GET', '/metrics')).body as string);
      return scrape.value('agentrt_webhook_deliveries_total', { result: 'delivered' }) > 0 ? scrape : undefined;
    }, 'the deliveries counted');
  });

  after(async () => {
    await api?.close();
    await Promise.all([tools?.close(), receiver?.close()]);
    await deleteWebhookIntakeDurables(busNames.subjectPrefix).catch(() => undefined);
    await deleteStream(busNames.eventStream).catch(() => undefined);
  });

  it('reads the series of an expression, not its functions, labels, ranges or grouping', () => {
    assert.deepEqual(
      seriesNamesOf('histogram_quantile(0.95, sum by (le, model) (rate(agentrt_model_call_duration_seconds_bucket{outcome="ok", model=~"a|b"}[$__rate_interval])))'),
      ['agentrt_model_call_duration_seconds_bucket'],
    );
    assert.deepEqual(seriesNamesOf('sum(rate(a_sum[5m])) / sum(rate(a_count[5m])) * 3600 and on (instance) up'), ['a_sum', 'a_count', 'up']);
  });

  it('every expression of the Grafana dashboard names only series the node exports', () => {
    const expressions = dashboardExpressions();
    assert.ok(expressions.length >= 40, `${expressions.length} expressions`);
    const unknown: string[] = [];
    for (const { panel, expr } of expressions) {
      const names = seriesNamesOf(expr);
      assert.ok(names.length > 0, `panel "${panel}" reads a series: ${expr}`);
      for (const name of names) if (!scraped.familyOf(name)) unknown.push(`${panel}: ${name}`);
    }
    assert.deepEqual(unknown, []);
  });

  it('every agentrt series the node exports is on the dashboard', () => {
    const charted = new Set(dashboardExpressions().flatMap(({ expr }) => seriesNamesOf(expr)).map((name) => scraped.familyOf(name)));
    const missing = [...scraped.types.keys()].filter((family) => family.startsWith('agentrt_') && !charted.has(family));
    assert.deepEqual(missing, []);
  });

  it("docs/operations.md lists exactly the series the node exports, each with its type and labels", () => {
    const documented = documentedSeries();
    assert.ok(documented.length >= 60, `${documented.length} documented series`);
    assert.deepEqual(documented.map((series) => series.name).sort(), [...scraped.types.keys()].sort());
    for (const series of documented) {
      assert.equal(series.type, scraped.types.get(series.name), `the type of ${series.name}`);
      assert.deepEqual([...series.labels].sort(), declaredLabels(series.name), `the labels of ${series.name}`);
    }
  });
});
