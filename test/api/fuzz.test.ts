// The seeded fuzz run of `npm run fuzz` (fuzz/fuzz-run.ts), smaller: about
// 1,000 requests generated from the served OpenAPI document against a node
// with its embedded runtime. Fails with the report, which names each failing
// case and the line that reproduces it.
import assert from 'node:assert/strict';
import { formatReport, passed, runFuzz, type FuzzReport } from '../../fuzz/fuzz-run';
import { statusBodyProblem } from '../../fuzz/answer-check';

const SEED = 20_120_003;
const RUNS = 960;

describe('fuzzing the API from its OpenAPI document', function () {
  this.timeout(120_000);
  let report: FuzzReport;
  before(async () => (report = await runFuzz({ seed: SEED, runs: RUNS, concurrency: 8, timeoutMs: 15_000 })));

  it('answers every generated request without a 5xx or a hang, each error a Status body matching its HTTP status', () => {
    assert.ok(report.requests >= RUNS, formatReport(report));
    assert.deepEqual(report.failures, [], formatReport(report));
  });

  it('reaches every operation of the document', () => {
    assert.deepEqual(report.missedOperations, [], formatReport(report));
  });

  it('leaves the node healthy and the data it created intact', () => {
    assert.deepEqual(report.afterChecks, [], formatReport(report));
    assert.ok(passed(report));
  });
});

describe('statusBodyProblem', () => {
  it('accepts a Status body whose code maps to the HTTP status, and the edge statuses of INVALID_ARGUMENT', () => {
    assert.equal(statusBodyProblem(404, '{"code":5,"message":"agent x not found","details":[]}'), null);
    assert.equal(statusBodyProblem(415, '{"code":3,"message":"content type","details":[]}'), null);
  });

  it('names a code that maps to another HTTP status, and a body that is not a Status', () => {
    assert.equal(statusBodyProblem(400, '{"code":5,"message":"x","details":[]}'), '400 with code NOT_FOUND (5), which maps to 404');
    assert.equal(statusBodyProblem(431, ''), '431 without a JSON Status body');
    assert.equal(statusBodyProblem(400, '{"code":3,"message":"x"}'), '400 body is not a Status {code, message, details}');
  });
});
