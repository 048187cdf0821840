// Compaction benchmark (issue 25 item 4 targets): prints JSON lines of
// figures, asserts nothing. One node in this process (the real HTTP API and
// the actor runtime over a fresh Postgres database) with the builtin/scripted
// model, whose row in the bench's workspace is set to maxInputTokens 32,768
// (no API sets it; the output says so); a driver child process (this file,
// forked with DRIVER=1) serves the loopback HTTP tool, so its CPU is not the
// node's. Two objectives of TURNS model turns, one tool call each, run one at
// a time, ROUNDS times each, alternating:
// - long: every tool result is 8 KiB (2,048 tokens as builtin/scripted counts
//   them, a character per 4), so the conversation passes the threshold
//   (0.75 x 32,768 = 24,576 tokens) every dozen turns and is compacted;
// - short: every result is 16 bytes, so the prompt never comes near the
//   threshold and nothing is compacted;
// - summarized (figures only, no target): 8 KiB results with
//   preserveRecentResults 11, so clearing is not enough and builtin/scripted
//   summarizes (its summary is the rest of its script): the script must
//   still call pages 1 … TURNS once each, in order;
// - a control: CONTROL_TURNS-turn objectives with 8 KiB and 16-byte results,
//   neither compacted, for the cost of the results' size alone.
// For each: the largest prompt sent (every ASSISTANT_MESSAGE's
// usage.promptTokens, which builtin/scripted computes from the prompt it
// got) against the threshold, the compactions, and the wall time per model
// turn (first to last event) less the tool's share (TOOL_CALLED to
// TOOL_RESULT); the target is the long one's overhead within 1 ms of the
// short one's.
// Before the node starts, the same two objectives run through the pure
// objective behaviour in this process (no runtime, no I/O, builtin/scripted
// called directly): the CPU time of the objective's own decisions per model
// turn, where the estimate and the compaction run, without the noise of
// Postgres and a shared machine.
// Run with `node --expose-gc --import tsx bench/memory-compaction.ts`
// (TURNS=300, ROUNDS=3 by default; PROFILE=<prefix> writes a CPU profile of
// one more run of each, <prefix>-long.cpuprofile and <prefix>-short.cpuprofile).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { toolTurnsScript } from '../test/support/objective-storage';
import { startOf, toolSuccess } from '../test/unit/objectives/objective-driver';
import { ScriptedChatModel } from '../src/models/scripted-model';
import { objectiveBehavior } from '../src/objectives/objective.behavior';
import type { ObjectiveEvent as JournalEvent, ObjectiveState } from '../src/objectives/objective-state';
import type { ActorDecision, EffectRequest } from '../src/ports/actor-behavior';
import type { ChatRequest } from '../src/ports/model-provider';
import { startBenchNode } from './support/bench-node';
import { startDriverProcess } from './support/driver-process';
import { startProfiler } from './support/cpu-profiler';

const TURNS = Number(process.env.TURNS ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const MAX_INPUT_TOKENS = 32_768;
const TRIGGER_THRESHOLD = 0.75;
const LONG_RESULT_BYTES = 8 * 1024;
/** The control's objectives: 10 turns of 8 KiB results are 20,480 tokens, under the threshold. */
const CONTROL_TURNS = 10;
const CONTROL_ROUNDS = Number(process.env.CONTROL_ROUNDS ?? 30);
const SHORT_RESULT_BYTES = 16;

function log(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value: number, digits = 3) => Number(value.toFixed(digits));

// ---------------------------------------------------------------------------------------------
// The driver (a child process): the tool, answering `?bytes=` of text.

function driver(): void {
  const server = http.createServer((incoming, response) => {
    incoming.resume();
    incoming.on('end', () => {
      const bytes = Number(new URL(incoming.url ?? '/', 'http://tool').searchParams.get('bytes') ?? 0);
      response.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.alloc(bytes, 'x'));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.send!({ ready: true, toolUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  });
  process.on('message', () => undefined);
  process.on('disconnect', () => server.close(() => process.exit(0)));
}

// ---------------------------------------------------------------------------------------------
// The objective's decisions alone (this process, before the node starts).

type Decision = ActorDecision<JournalEvent, unknown, unknown, ObjectiveState>;

/** Runs one objective of TURNS tool turns through the pure behaviour; the time spent in its decisions (and their folding) per model turn. */
async function decisionsOnly(resultBytes: number): Promise<{ decisionUsPerTurn: number; modelTurns: number; compactions: number; maxPromptTokens: number }> {
  const behavior = objectiveBehavior;
  const model = new ScriptedChatModel();
  const context = { kind: 'objective', id: 'obj_bench', now: new Date() };
  const result = Buffer.alloc(resultBytes, 'x').toString();
  let state: ObjectiveState = behavior.initialState('obj_bench');
  const running = new Map<string, EffectRequest>();
  let spentNs = 0n;
  let compactions = 0;
  let maxPromptTokens = 0;
  const apply = (decision: Decision) => {
    for (const event of decision.events ?? []) state = behavior.evolve(state, event);
    for (const id of decision.effects?.abort ?? []) running.delete(id);
    for (const effect of decision.effects?.start ?? []) running.set(effect.id!, effect);
  };
  const timed = async (step: () => Decision | Promise<Decision>) => {
    const started = process.hrtime.bigint();
    const decision = await step();
    apply(decision);
    spentNs += process.hrtime.bigint() - started;
    compactions += (decision.publish ?? []).filter((event) => event.type === 'objective_event.context_window_compacted').length;
  };
  const start = startOf({
    objectiveId: 'obj_bench', modelId: 'builtin/scripted', initialMessage: toolTurnsScript('lookup', TURNS),
    limits: { maxToolCalls: 0, maxSubObjectives: 0, maxModelTurns: 0, maxTokens: 0 },
    compaction: { maxInputTokens: MAX_INPUT_TOKENS, triggerThreshold: TRIGGER_THRESHOLD, preserveRecentResults: 2 },
  });
  await timed(() => behavior.decide(state, { type: 'start', start }, context));
  while (running.size) {
    const [effect] = running.values();
    running.delete(effect.id!);
    let value: unknown;
    if (effect.name === 'tool.call') {
      value = toolSuccess(effect.id!, result);
    } else {
      const response = await model.complete(effect.transientInput as ChatRequest);
      if (effect.name === 'model.call') maxPromptTokens = Math.max(maxPromptTokens, response.usage?.promptTokens ?? 0);
      value = response;
    }
    const outcome = { id: effect.id!, name: effect.name, input: effect.input, timeoutMs: effect.timeoutMs, attempt: 1, ok: true as const, value };
    await timed(() => behavior.onEffectResult!(state, outcome, context));
  }
  const modelTurns = state.modelTurn;
  return { decisionUsPerTurn: Number(spentNs / BigInt(modelTurns)) / 1000, modelTurns, compactions, maxPromptTokens };
}

async function decisionsPhase(): Promise<void> {
  const figures: Record<string, Array<Awaited<ReturnType<typeof decisionsOnly>>>> = { long: [], short: [] };
  await decisionsOnly(LONG_RESULT_BYTES);
  await decisionsOnly(SHORT_RESULT_BYTES);
  for (let round_ = 0; round_ < 5; round_++) {
    global.gc?.();
    figures.long.push(await decisionsOnly(LONG_RESULT_BYTES));
    global.gc?.();
    figures.short.push(await decisionsOnly(SHORT_RESULT_BYTES));
  }
  const summary = (runs: Array<Awaited<ReturnType<typeof decisionsOnly>>>) => ({
    modelTurns: runs[0].modelTurns, compactions: runs[0].compactions, maxPromptTokens: runs[0].maxPromptTokens,
    decisionUsPerTurn: round(median(runs.map((run) => run.decisionUsPerTurn)), 1),
  });
  const long = summary(figures.long);
  const short = summary(figures.short);
  log({ bench: 'compaction-decisions', note: 'the pure objective behaviour only: CPU per model turn of its decisions', long, short, longMinusShortUsPerTurn: round(long.decisionUsPerTurn - short.decisionUsPerTurn, 1) });
}

// ---------------------------------------------------------------------------------------------
// The node side (this process).

interface ObjectiveEvent {
  metadata: { createdAt: string };
  contextWindowId?: string;
  data: {
    type: string;
    assistantMessage?: { usage: { promptTokens: number }; toolCalls: Array<{ arguments: string }> };
    contextWindowCompacted?: { strategies: string[] };
  };
}

interface RunFigures {
  status: string;
  /** The tool was called with pages 1 … TURNS, once each, in order: the script ran exactly, compactions included. */
  scriptPerformedInOrder: boolean;
  modelTurns: number;
  maxPromptTokens: number;
  compactions: number;
  strategies: Record<string, number>;
  contextWindows: number;
  wallMsPerTurn: number;
  toolMsPerTurn: number;
  overheadMsPerTurn: number;
  /** The node process's CPU (user + system) per model turn over the run: the tool runs in the driver, so none of it is the tool's. */
  nodeCpuMsPerTurn: number;
}

async function main(): Promise<void> {
  await decisionsPhase();
  const driverProcess = startDriverProcess<never, { ready: true; toolUrl: string }>(__filename);
  const { toolUrl } = await driverProcess.ready;
  const api = await startBenchNode({ runtime: { shardCount: 64 }, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
  try {
    const account = await api.bootstrap('bench-compaction');
    const headers = { authorization: `Bearer ${account.globalApiKey.token}`, 'content-type': 'application/json' };
    const ws = account.workspaceId;
    const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const response = await request(`${api.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`${method} ${path}: ${response.statusCode} ${text}`);
      return JSON.parse(text) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    await api.dataSource.query("UPDATE models SET max_input_tokens = $1 WHERE workspace_id = $2 AND name = 'builtin/scripted'", [MAX_INPUT_TOKENS, ws]);
    const [row] = await api.dataSource.query("SELECT max_input_tokens FROM models WHERE workspace_id = $1 AND name = 'builtin/scripted'", [ws]) as Array<{ max_input_tokens: number }>;
    log({ bench: 'compaction-setup', note: `builtin/scripted's model row in this bench's workspace set to maxInputTokens ${row.max_input_tokens} (no API sets it)`, turns: TURNS, rounds: ROUNDS });

    /** An agent whose one tool answers `bytes` bytes, with no model turn or token cap (300 turns is past the default 50). */
    const agentFor = async (name: string, bytes: number, preserveRecentResults?: number) => {
      const agent = await call('POST', `/v1/workspaces/${ws}/agents`, { metadata: { name } });
      const variation = await call('POST', `/v1/workspaces/${ws}/agents/${agent.metadata.id}/variations`, {
        metadata: { name: 'v1' },
        spec: {
          prompt: 'You read pages.', modelConfig: { modelId: 'builtin/scripted' }, constraints: { maxModelTurns: 0, maxTokens: 0 },
          compactionConfig: { triggerThreshold: TRIGGER_THRESHOLD, ...(preserveRecentResults === undefined ? {} : { toolResultClearing: { preserveRecentResults } }) },
        },
      });
      const tool = await call('POST', `/v1/workspaces/${ws}/tools`, { metadata: { name: `${name}-page` }, spec: { description: 'Reads a page', http: { url: `${toolUrl}/page?bytes=${bytes}`, method: 'POST' } } });
      await call('POST', `/v1/workspaces/${ws}/agents/${agent.metadata.id}/variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id });
      return { agentId: agent.metadata.id as string, toolName: `${name}-page`.replace(/[^A-Za-z0-9_-]/gu, '_') };
    };

    const run = async ({ agentId, toolName }: { agentId: string; toolName: string }, turns = TURNS): Promise<RunFigures> => {
      const cpuBefore = process.cpuUsage();
      const objective = await call('POST', `/v1/workspaces/${ws}/objectives`, { agentId, initialMessage: toolTurnsScript(toolName, turns) });
      const id = objective.metadata.id as string;
      for (;;) {
        const [{ status }] = await api.dataSource.query('SELECT status FROM objectives WHERE id = $1', [id]) as Array<{ status: string }>;
        if (!['OBJECTIVE_STATUS_PENDING', 'OBJECTIVE_STATUS_RUNNING'].includes(status)) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const cpu = process.cpuUsage(cpuBefore);
      const events: ObjectiveEvent[] = [];
      for (let cursor = ''; ;) {
        const page = await call('GET', `/v1/workspaces/${ws}/objectives/${id}/events?limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
        events.push(...(page.items as ObjectiveEvent[]));
        cursor = page.pagination.nextCursor as string;
        if (!cursor) break;
      }
      const at = (event: ObjectiveEvent) => Date.parse(event.metadata.createdAt);
      const type = (event: ObjectiveEvent) => event.data.type.replace('OBJECTIVE_EVENT_TYPE_', '');
      const assistant = events.filter((event) => type(event) === 'ASSISTANT_MESSAGE');
      const compacted = events.filter((event) => type(event) === 'CONTEXT_WINDOW_COMPACTED');
      let toolMs = 0;
      let calledAt = 0;
      for (const event of events) {
        if (type(event) === 'TOOL_CALLED') calledAt = at(event);
        if (type(event) === 'TOOL_RESULT') toolMs += at(event) - calledAt;
      }
      const strategies: Record<string, number> = {};
      for (const event of compacted) for (const strategy of event.data.contextWindowCompacted!.strategies) strategies[strategy] = (strategies[strategy] ?? 0) + 1;
      const wallMs = at(events[events.length - 1]) - at(events[0]);
      const final = events[events.length - 1] as unknown as { data: { finalized?: { status: string } } };
      const pages = assistant.flatMap((event) => event.data.assistantMessage!.toolCalls.map((toolCall) => (JSON.parse(toolCall.arguments) as { page: number }).page));
      return {
        status: final.data.finalized?.status ?? 'unknown',
        scriptPerformedInOrder: pages.length === turns && pages.every((page, index) => page === index + 1),
        modelTurns: assistant.length,
        maxPromptTokens: Math.max(...assistant.map((event) => event.data.assistantMessage!.usage.promptTokens)),
        compactions: compacted.length,
        strategies,
        contextWindows: new Set(events.map((event) => event.contextWindowId)).size,
        wallMsPerTurn: wallMs / assistant.length,
        toolMsPerTurn: toolMs / assistant.length,
        overheadMsPerTurn: (wallMs - toolMs) / assistant.length,
        nodeCpuMsPerTurn: (cpu.user + cpu.system) / 1000 / assistant.length,
      };
    };

    const long = await agentFor('long', LONG_RESULT_BYTES);
    const short = await agentFor('short', SHORT_RESULT_BYTES);
    // Eleven 8 KiB results preserved are 22,528 tokens: clearing alone soon no longer fits, so the script runs through summaries.
    const summarized = await agentFor('summarized', LONG_RESULT_BYTES, 11);
    // A warm-up of each, not counted (the JIT, prepared statements, pools).
    await run(long);
    await run(short);
    await run(summarized);
    const results: { long: RunFigures[]; short: RunFigures[]; summarized: RunFigures[] } = { long: [], short: [], summarized: [] };
    for (let round_ = 0; round_ < ROUNDS; round_++) {
      global.gc?.();
      results.long.push(await run(long));
      global.gc?.();
      results.short.push(await run(short));
      global.gc?.();
      results.summarized.push(await run(summarized));
    }
    const threshold = Math.floor(TRIGGER_THRESHOLD * MAX_INPUT_TOKENS);
    for (const [name, runs] of Object.entries(results)) {
      log({
        bench: `compaction-${name}`,
        resultBytes: name === 'short' ? SHORT_RESULT_BYTES : LONG_RESULT_BYTES,
        preserveRecentResults: name === 'summarized' ? 11 : 2,
        statuses: [...new Set(runs.map((figures) => figures.status))],
        scriptPerformedInOrder: runs.every((figures) => figures.scriptPerformedInOrder),
        modelTurns: runs[0].modelTurns,
        maxPromptTokens: Math.max(...runs.map((figures) => figures.maxPromptTokens)),
        thresholdTokens: threshold,
        underThreshold: runs.every((figures) => figures.maxPromptTokens <= threshold),
        compactions: runs[0].compactions,
        strategies: runs[0].strategies,
        contextWindows: runs[0].contextWindows,
        wallMsPerTurn: round(median(runs.map((figures) => figures.wallMsPerTurn))),
        toolMsPerTurn: round(median(runs.map((figures) => figures.toolMsPerTurn))),
        overheadMsPerTurn: round(median(runs.map((figures) => figures.overheadMsPerTurn))),
        overheadMsPerTurnRuns: runs.map((figures) => round(figures.overheadMsPerTurn)),
        nodeCpuMsPerTurn: round(median(runs.map((figures) => figures.nodeCpuMsPerTurn))),
        nodeCpuMsPerTurnRuns: runs.map((figures) => round(figures.nodeCpuMsPerTurn)),
      });
    }
    if (process.env.PROFILE) {
      for (const [name, agent] of [['long', long], ['short', short]] as const) {
        const profiler = await startProfiler();
        await run(agent);
        await profiler.stopInto(`${process.env.PROFILE}-${name}.cpuprofile`);
      }
    }
    const difference = median(results.long.map((figures) => figures.overheadMsPerTurn)) - median(results.short.map((figures) => figures.overheadMsPerTurn));
    // The control: what 8 KiB results cost a turn without any compaction (CONTROL_TURNS of them stay far under the threshold).
    const control: { long: RunFigures[]; short: RunFigures[] } = { long: [], short: [] };
    for (let round_ = 0; round_ < CONTROL_ROUNDS; round_++) {
      control.long.push(await run(long, CONTROL_TURNS));
      control.short.push(await run(short, CONTROL_TURNS));
    }
    log({
      bench: 'compaction-control',
      note: `${CONTROL_TURNS}-turn objectives, 8 KiB vs 16-byte results, no compaction in either: the cost of the results' size alone`,
      compactions: control.long[0].compactions + control.short[0].compactions,
      longOverheadMsPerTurn: round(median(control.long.map((figures) => figures.overheadMsPerTurn))),
      shortOverheadMsPerTurn: round(median(control.short.map((figures) => figures.overheadMsPerTurn))),
      longMinusShortMsPerTurn: round(median(control.long.map((figures) => figures.overheadMsPerTurn)) - median(control.short.map((figures) => figures.overheadMsPerTurn))),
      longMinusShortNodeCpuMsPerTurn: round(median(control.long.map((figures) => figures.nodeCpuMsPerTurn)) - median(control.short.map((figures) => figures.nodeCpuMsPerTurn))),
    });
    const cpuDifference = median(results.long.map((figures) => figures.nodeCpuMsPerTurn)) - median(results.short.map((figures) => figures.nodeCpuMsPerTurn));
    log({ bench: 'compaction-overhead', longMinusShortMsPerTurn: round(difference), longMinusShortNodeCpuMsPerTurn: round(cpuDifference), target: 'within 1 ms per turn; the long objective never above the threshold' });
  } finally {
    driverProcess.child.disconnect();
    await api.close();
  }
}

(process.env.DRIVER ? Promise.resolve(driver()) : main()).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
