// The node's heap setting (actors/runtime/heap-tuning.ts): with it, V8 tenures
// no allocation site however long its objects live; without it, the same
// workload gets sites tenured (so the check can fail); and an explicit
// `--allocation-site-pretenuring` on the command line is left alone. V8's own
// trace of its decisions (--trace-pretenuring-statistics) is the witness.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const WORKLOAD = path.join(__dirname, '../support/pretenuring-workload.ts');

/** Sites V8 decided to tenure in a run of the workload. */
async function tenuredSites(nodeFlags: string[], workloadArguments: string[]): Promise<number> {
  const { stdout } = await run(process.execPath, [...nodeFlags, '--trace-pretenuring-statistics', '--require', 'tsx/cjs', WORKLOAD, ...workloadArguments], {
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.match(stdout, /kept \d+/);
  return stdout.split('\n').filter((line) => line.includes('=> tenure')).length;
}

describe('heap tuning of a node', function () {
  this.timeout(60_000);

  it('keeps V8 from tenuring allocation sites', async () => {
    assert.equal(await tenuredSites([], ['tune']), 0);
  });

  it('is what makes the difference: the same workload untuned gets its sites tenured', async () => {
    assert.ok((await tenuredSites([], [])) > 0);
  });

  it('leaves pretenuring on when the command line asks for it', async () => {
    assert.ok((await tenuredSites(['--allocation-site-pretenuring'], ['tune'])) > 0);
  });
});
