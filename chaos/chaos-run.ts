// `npm run chaos`: the chaos scenarios, one after the other, each on built
// agentrt nodes with a Postgres and a NATS of its own (a temporary folder, free
// ports), under a steady load of objectives with faults, then checks printing
// each figure:
// - "nodes" (chaos/scenario-nodes.ts): three nodes through a rolling deploy,
//   kill -9, SIGSTOP past the lease, a NATS restart and a Postgres restart;
// - "infrastructure" (chaos/scenario-infrastructure.ts): two nodes through
//   NATS and Postgres restarts and outages and NATS replaced by an empty
//   server, measuring the time back to full service after each.
// `npm run chaos -- infrastructure` (or CHAOS_SCENARIO=infrastructure) runs one.
// Exits 1 when a check of any scenario fails (keeping that scenario's logs), 2
// when a run itself broke. Settings: CHAOS_RATE (objectives/s), CHAOS_PHASE_MS
// (calm between faults, default 15000), CHAOS_KEEP=1 keeps the logs of a
// passing run too.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertBuilt } from '../test/e2e/cli-process';
import { say } from './log';
import type { ChaosScenario } from './scenario';
import { InfrastructureScenario } from './scenario-infrastructure';
import { NodesScenario } from './scenario-nodes';

const SCENARIOS: Record<string, (root: string) => ChaosScenario> = {
  nodes: (root) => new NodesScenario(root),
  infrastructure: (root) => new InfrastructureScenario(root),
};

/** The scenarios asked for (arguments, else CHAOS_SCENARIO, else all). @throws on an unknown name */
function chosenScenarios(): string[] {
  const asked = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
  const names = asked.length ? asked : (process.env.CHAOS_SCENARIO ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !(name in SCENARIOS));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}: choose among ${Object.keys(SCENARIOS).join(', ')}`);
  return names.length ? names : Object.keys(SCENARIOS);
}

let current: { scenario: ChaosScenario; tornDown: boolean } | undefined;

/** Runs one scenario in its own temporary folder. @returns 0 passed, 1 a check failed, 2 the run broke */
async function runScenario(name: string): Promise<number> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), `agentrt-chaos-${name}-`));
  // Postgres runs as its own user and must reach its folder inside.
  await fs.chmod(root, 0o755);
  const scenario = SCENARIOS[name](root);
  current = { scenario, tornDown: false };
  say(`scenario "${name}" in ${root}`);
  let passed = false;
  try {
    await scenario.setUp();
    const checks = await scenario.run();
    passed = checks.report(name, scenario.cluster);
    return passed ? 0 : 1;
  } catch (error) {
    console.error(`scenario "${name}" broke: ${(error as Error).stack ?? error}`);
    return 2;
  } finally {
    if (!current.tornDown) {
      current.tornDown = true;
      scenario.stop();
      await scenario.cluster.tearDown(!passed || process.env.CHAOS_KEEP === '1');
    }
  }
}

async function main(): Promise<number> {
  assertBuilt();
  const names = chosenScenarios();
  const interrupt = (signal: NodeJS.Signals) => {
    say(`${signal}: cleaning up`);
    if (!current || current.tornDown) process.exit(130);
    current.tornDown = true;
    current.scenario.stop();
    void current.scenario.cluster.tearDown(false).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const results: Array<[string, number]> = [];
  for (const name of names) results.push([name, await runScenario(name)]);
  const verdict = (code: number) => (code === 0 ? 'PASSED' : code === 1 ? 'FAILED' : 'BROKE');
  console.log(`\nchaos run: ${results.map(([name, code]) => `${name} ${verdict(code)}`).join(', ')}`);
  return Math.max(...results.map(([, code]) => code));
}

void main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`chaos run broke: ${(error as Error).stack ?? error}`);
    process.exit(2);
  },
);
