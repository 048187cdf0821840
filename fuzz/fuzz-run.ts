// `npm run fuzz` (issue 12 item 3): a node in this process (the real app with
// its embedded actor runtime, over a fresh Postgres database), fixtures in two
// accounts, then FUZZ_RUNS seeded cases generated from the served OpenAPI
// document (request-generator.ts) sent FUZZ_CONCURRENCY at a time. Every
// answer must pass answer-check.ts; afterwards /healthz and /readyz answer 200,
// the other account's resources are unchanged and the fuzzed workspace's still
// answer. Prints a report and exits 1 on a failure, 2 when the run itself broke.
// Settings: FUZZ_SEED (default: random, printed), FUZZ_RUNS (10000),
// FUZZ_CONCURRENCY (8), FUZZ_TIMEOUT_MS (15000), FUZZ_ONLY=<case> sends one
// case and prints its request and answer.
import http from 'node:http';
import { sharedTestDatabase } from '../test/support/global-setup';
import { startTestApi, type TestApi } from '../test/support/api';
import { checkAnswer } from './answer-check';
import { FuzzSetupError, idPools, Snapshot, Workspace } from './fuzz-world';
import { operationsOf, type OpenApiDocument, type Operation } from './operations';
import { RequestGenerator, type FuzzCase, type FuzzRequest } from './request-generator';
import { send, type Answer } from './send';

export interface FuzzOptions {
  seed: number;
  runs: number;
  /** @default 8 */
  concurrency?: number;
  /** @default 15000 */
  timeoutMs?: number;
  /** Sends only this case (and prints it). */
  only?: number;
}

export interface FuzzFailure {
  caseIndex: number;
  problem: string;
  request: string;
  answer: string;
}

export interface FuzzReport {
  seed: number;
  cases: number;
  requests: number;
  durationMs: number;
  operations: number;
  byOperation: Record<string, number>;
  byStatus: Record<string, number>;
  byMutation: Record<string, number>;
  failures: FuzzFailure[];
  /** Problems of the checks after the run (health, intact data). */
  afterChecks: string[];
  /** Lines the node logged as unhandled errors (the 500s' causes). */
  unhandledErrors: string[];
  /** Operations of the document no case reached. */
  missedOperations: string[];
  /** Cases not sent because creating their fresh resource was refused (a 4xx). */
  skipped: number;
}

const increment = (counts: Record<string, number>, key: string) => (counts[key] = (counts[key] ?? 0) + 1);
const clip = (text: string, length = 400) => (text.length > length ? `${text.slice(0, length)}… (${text.length} chars)` : text);

interface Principals {
  fuzzed: Workspace;
  other: Workspace;
  disposable: () => Promise<string>;
}

/** Authorization and workspace headers for the request's principal. */
async function credentials(request: FuzzRequest, operation: Operation, principals: Principals): Promise<Record<string, string>> {
  const { fuzzed, other } = principals;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  // Rotating or disabling a global key would lock the run (or the other account's checks) out: those calls get an account of their own.
  if (/^\/v1\/account\/global_api_key\/[a-z]+$/.test(operation.path) && ['owner', 'global', 'foreign'].includes(request.principal)) return bearer(await principals.disposable());
  switch (request.principal) {
    case 'anonymous':
    case 'header':
      return {};
    case 'foreign':
      return bearer(other.globalToken);
    case 'global':
      return { ...bearer(fuzzed.globalToken), ...(operation.binding === 'flat' ? { 'x-workspace-id': fuzzed.workspaceId } : {}) };
    default:
      return bearer(operation.binding === 'none' ? fuzzed.globalToken : fuzzed.token);
  }
}

function describeRequest(request: FuzzRequest, target: string): string {
  const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${clip(String(value), 80)}`).join('; ');
  const body = request.body ? ` body(${request.body.contentType ?? 'application/json'}${request.body.encoding === 'latin1' ? ', latin1' : ''}) ${clip(request.body.text, 300)}` : '';
  return `${request.method} ${clip(target, 300)} [${request.mutation}, principal ${request.principal}${headers ? `, ${headers}` : ''}]${body}`;
}

function describeAnswer(answer: Answer): string {
  return 'error' in answer ? `(${answer.error})` : `${answer.status} ${clip(answer.text, 400)}`;
}

/** One fuzz run against a node it starts and stops. */
export class FuzzRun {
  /**
   * Idle sockets are closed after 4 s, before the server's 5 s keep-alive
   * timeout: a request written on a socket at the moment the server closes it
   * gets ECONNRESET, which the run would report as a request without answer.
   */
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 });
  private readonly operations: Map<string, Operation>;
  readonly report: FuzzReport;

  private constructor(private readonly api: TestApi, private readonly generator: RequestGenerator, private readonly principals: Principals, private readonly snapshot: Snapshot, private readonly options: FuzzOptions) {
    this.operations = new Map(generator.operations.map((operation) => [operation.operationId, operation]));
    this.report = {
      seed: options.seed, cases: 0, requests: 0, durationMs: 0, operations: generator.operations.length,
      byOperation: {}, byStatus: {}, byMutation: {}, failures: [], afterChecks: [], unhandledErrors: [], missedOperations: [], skipped: 0,
    };
  }

  static async prepare(api: TestApi, options: FuzzOptions): Promise<FuzzRun> {
    const document = (await api.request('GET', '/v1/openapi.json')).body as OpenApiDocument;
    const fuzzed = await Workspace.open(api, 'fuzzed');
    const other = await Workspace.open(api, 'other');
    await fuzzed.populate();
    await other.populate();
    const snapshot = await Snapshot.take(other);
    const disposable = async () => (await api.bootstrap('fuzz-disposable')).globalApiKey.token;
    return new FuzzRun(api, new RequestGenerator(operationsOf(document), idPools(fuzzed, other)), { fuzzed, other, disposable }, snapshot, options);
  }

  async run(): Promise<FuzzReport> {
    const started = Date.now();
    const indexes = this.options.only !== undefined ? [this.options.only] : Array.from({ length: this.options.runs }, (_v, index) => index);
    let next = 0;
    const worker = async () => {
      while (next < indexes.length) await this.runCase(indexes[next++]);
    };
    await Promise.all(Array.from({ length: this.options.concurrency ?? 8 }, worker));
    this.report.cases = indexes.length;
    this.report.durationMs = Date.now() - started;
    await this.afterChecks();
    this.agent.destroy();
    return this.report;
  }

  private async runCase(index: number): Promise<void> {
    const fuzzCase: FuzzCase = this.generator.case(this.options.seed, index);
    const requests = fuzzCase.kind === 'single' ? [fuzzCase.request] : fuzzCase.requests;
    let targets: string[];
    try {
      targets = await this.fillPlaceholders(requests.map((request) => request.target));
    } catch (error) {
      // Earlier cases may have changed the parents (a variation without a model): a 4xx skips the case, a 5xx is a finding.
      const message = (error as Error).message;
      if (/: 5\d\d /.test(message) || !(error instanceof FuzzSetupError)) this.fail(index, `creating a fresh resource failed: ${message}`, requests[0], requests[0].target, { error: 'not sent' });
      else this.report.skipped += 1;
      return;
    }
    await Promise.all(requests.map((request, position) => this.sendOne(index, request, targets[position])));
  }

  /** Replaces each `{{fresh:kind}}` with a resource created for this case (one per placeholder, shared by a pair). */
  private async fillPlaceholders(targets: string[]): Promise<string[]> {
    const created = new Map<string, string>();
    for (const [placeholder, kind] of targets.join('\n').matchAll(/\{\{fresh:([a-z]+)\}\}/g)) {
      if (!created.has(placeholder)) created.set(placeholder, await this.principals.fuzzed.create(kind));
    }
    return targets.map((target) => target.replace(/\{\{fresh:[a-z]+\}\}/g, (placeholder) => created.get(placeholder)!));
  }

  private async sendOne(index: number, request: FuzzRequest, target: string): Promise<void> {
    const operation = this.operations.get(request.operationId)!;
    const headers: Record<string, string | string[]> = { ...(await credentials(request, operation, this.principals)), ...request.headers };
    const body = request.body ? Buffer.from(request.body.text, request.body.encoding ?? 'utf8') : undefined;
    if (body) {
      const contentType = request.body?.contentType ?? 'application/json';
      if (contentType) headers['content-type'] = contentType;
      headers['content-length'] = String(body.length);
    }
    const answer = await send(this.api.url, this.agent, { method: request.method, target, headers, body }, this.options.timeoutMs ?? 15_000);
    this.report.requests += 1;
    increment(this.report.byOperation, request.operationId);
    increment(this.report.byMutation, request.mutation);
    increment(this.report.byStatus, 'error' in answer ? answer.error : String(answer.status));
    const problem = checkAnswer(answer, { operationId: request.operationId, namesForeign: request.namesForeign, bodyBytes: body?.length ?? 0 });
    if (problem) this.fail(index, problem, request, target, answer);
    if (this.options.only !== undefined) console.log(`case ${index}\n  request: ${describeRequest(request, target)}\n  answer:  ${describeAnswer(answer)}`);
  }

  private fail(caseIndex: number, problem: string, request: FuzzRequest, target: string, answer: Answer): void {
    this.report.failures.push({ caseIndex, problem: `${request.operationId}: ${problem}`, request: describeRequest(request, target), answer: describeAnswer(answer) });
  }

  private async afterChecks(): Promise<void> {
    const problems = this.report.afterChecks;
    for (const path of ['/healthz', '/readyz']) {
      const response = await this.api.request('GET', path);
      if (response.status !== 200) problems.push(`GET ${path}: ${response.status} ${JSON.stringify(response.body)}`);
    }
    problems.push(...(await this.snapshot.verify()));
    for (const { path, token } of this.principals.fuzzed.readablePaths()) {
      const response = await this.api.request('GET', path, { token });
      if (response.status !== 200 && response.status !== 404) problems.push(`GET ${path} (fuzzed workspace): ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`);
    }
    this.report.unhandledErrors = this.api.logs.filter((line) => line.includes('unhandled error')).map((line) => clip(line, 600));
    if (this.options.only === undefined) {
      this.report.missedOperations = this.generator.operations.map((operation) => operation.operationId).filter((id) => !this.report.byOperation[id]);
    }
  }
}

/** Starts a node with its runtime, runs the fuzz and stops the node. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const api = await startTestApi({ runtime: true, logLevel: 'warn', poolSize: 10 });
  try {
    return await (await FuzzRun.prepare(api, options)).run();
  } finally {
    await api.close();
  }
}

/** True when the run passed: no failing answer, no failing check after it, every operation reached. */
export function passed(report: FuzzReport): boolean {
  return report.failures.length === 0 && report.afterChecks.length === 0 && report.missedOperations.length === 0;
}

const sortedCounts = (counts: Record<string, number>) => Object.entries(counts).sort((a, b) => b[1] - a[1]).map(([key, count]) => `${key} ${count}`).join(', ');

/** Failures grouped by operation and problem, ids and numbers left out. */
function failureKinds(failures: FuzzFailure[]): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const failure of failures) increment(kinds, failure.problem.replace(/[a-z]+_[0-9A-HJKMNP-TV-Z]{26}/g, '<id>').replace(/\{.*$/, '').trim());
  return kinds;
}

/** The report as printed lines; failures with the line that reproduces each. */
export function formatReport(report: FuzzReport, maxFailures = 40): string {
  const perOperation = Object.values(report.byOperation);
  const lines = [
    `fuzz seed ${report.seed}: ${report.cases} cases, ${report.requests} requests over ${Object.keys(report.byOperation).length}/${report.operations} operations in ${(report.durationMs / 1000).toFixed(1)} s`,
    `requests per operation: min ${Math.min(...perOperation)}, max ${Math.max(...perOperation)}`,
    `statuses: ${sortedCounts(report.byStatus)}`,
    `mutations: ${sortedCounts(report.byMutation)}`,
    `per operation: ${sortedCounts(report.byOperation)}`,
    `cases skipped (a fresh resource refused with a 4xx): ${report.skipped}`,
    `failures: ${report.failures.length}${report.failures.length ? ` (${sortedCounts(failureKinds(report.failures))})` : ''}; checks after the run: ${report.afterChecks.length ? report.afterChecks.join(' | ') : 'healthy, data intact'}`,
  ];
  if (report.missedOperations.length) lines.push(`operations never reached: ${report.missedOperations.join(', ')}`);
  for (const failure of report.failures.slice(0, maxFailures)) {
    lines.push(`FAIL case ${failure.caseIndex}: ${failure.problem}`, `  request: ${failure.request}`, `  answer:  ${failure.answer}`,
      `  reproduce: FUZZ_SEED=${report.seed} FUZZ_ONLY=${failure.caseIndex} npm run fuzz`);
  }
  if (report.failures.length > maxFailures) lines.push(`… and ${report.failures.length - maxFailures} more failures`);
  if (report.unhandledErrors.length) lines.push(`node logged ${report.unhandledErrors.length} unhandled errors, first: ${report.unhandledErrors[0]}`);
  return lines.join('\n');
}

async function main(): Promise<number> {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
  const only = process.env.FUZZ_ONLY ? Number(process.env.FUZZ_ONLY) : undefined;
  const options: FuzzOptions = {
    seed, only,
    runs: Number(process.env.FUZZ_RUNS ?? 10_000),
    concurrency: Number(process.env.FUZZ_CONCURRENCY ?? 8),
    timeoutMs: Number(process.env.FUZZ_TIMEOUT_MS ?? 15_000),
  };
  console.log(`fuzz: seed ${seed}, ${only !== undefined ? `case ${only} only` : `${options.runs} cases`}, concurrency ${options.concurrency}`);
  const database = await sharedTestDatabase();
  try {
    const report = await runFuzz(options);
    console.log(formatReport(report));
    return passed(report) ? 0 : 1;
  } catch (error) {
    console.error(error instanceof FuzzSetupError ? `fuzz setup failed: ${error.message}` : error);
    return 2;
  } finally {
    if (!process.env.KEEP_TEST_DATABASE) await database.drop();
  }
}

if (require.main === module) {
  main().then((code) => process.exit(code), (error) => {
    console.error(error);
    process.exit(2);
  });
}
