// The usage roll-ups' pure rules (src/usage): the rows a batch of deltas adds
// to, how a range of hours splits into whole days and edge hours, and the
// report's range (defaults, rounding, refusals naming the field).
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors';
import { rangeParts, rollupRowsOf, type UsageDelta } from '../../src/usage/usage-rollup';
import { usageRangeOf } from '../../src/usage/usage.service';

const delta = (at: string, overrides: Partial<UsageDelta> = {}): UsageDelta => ({
  at, agentId: 'agent_1', variationId: 'agentvar_1', tenantId: 'tenant_1', modelId: 'builtin/scripted',
  promptTokens: 10, completionTokens: 2, costCents: 0.5, objectives: 0, ...overrides,
});

function refused(run: () => unknown, field: string, message: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof ApiError);
    assert.equal(error.code, 'INVALID_ARGUMENT');
    assert.match(error.message, new RegExp(`^${field}: `));
    assert.match(error.message, message);
    return true;
  });
}

describe('usage roll-ups (pure rules)', () => {
  it('sums a batch into one hour and one day row per dimension and bucket, sorted by key, with each key\'s first and last hour', () => {
    const { rows, keys } = rollupRowsOf([
      { workspaceId: 'ws_1', delta: delta('2026-03-01T10:05:00.000Z', { objectives: 1, promptTokens: 0, completionTokens: 0, costCents: 0 }) },
      { workspaceId: 'ws_1', delta: delta('2026-03-01T10:40:00.000Z') },
      { workspaceId: 'ws_1', delta: delta('2026-03-01T12:00:00.000Z', { tenantId: null }) },
      // Nothing to add: no row, no key.
      { workspaceId: 'ws_1', delta: delta('2026-03-02T00:00:00.000Z', { promptTokens: 0, completionTokens: 0, costCents: 0, agentId: 'agent_quiet' }) },
    ]);
    const agentRows = rows.filter((row) => row.dimension === 'agent').map(({ bucketHours, bucketStart, promptTokens, objectiveCount }) => ({ bucketHours, bucketStart, promptTokens, objectiveCount }));
    assert.deepEqual(agentRows, [
      { bucketHours: 1, bucketStart: '2026-03-01T10:00:00.000Z', promptTokens: 10, objectiveCount: 1 },
      { bucketHours: 1, bucketStart: '2026-03-01T12:00:00.000Z', promptTokens: 10, objectiveCount: 0 },
      { bucketHours: 24, bucketStart: '2026-03-01T00:00:00.000Z', promptTokens: 20, objectiveCount: 1 },
    ]);
    const tenantDays = rows.filter((row) => row.dimension === 'tenant' && row.bucketHours === 24).map((row) => [row.key, row.promptTokens, row.costCents]);
    assert.deepEqual(tenantDays, [['', 10, 0.5], ['tenant_1', 10, 0.5]], 'objectives without a tenant under the empty key');
    const identities = rows.map((row) => `${row.workspaceId}\u0000${row.dimension}\u0000${row.key}\u0000${row.bucketHours}\u0000${row.bucketStart}`);
    assert.deepEqual(identities, [...identities].sort(), 'sorted, so two batches lock common rows in one order');
    assert.equal(new Set(identities).size, identities.length, 'each row once: an upsert touches a row once per statement');
    assert.deepEqual(keys.find((key) => key.dimension === 'agent'), {
      workspaceId: 'ws_1', dimension: 'agent', key: 'agent_1', firstHour: '2026-03-01T10:00:00.000Z', lastHour: '2026-03-01T12:00:00.000Z',
    });
    assert.equal(keys.some((key) => key.key === 'agent_quiet'), false);
  });

  it('reads a range\'s whole UTC days from day rows and only the hours around them from hour rows', () => {
    const at = (iso: string) => new Date(iso);
    const parts = rangeParts({ from: at('2026-03-01T10:00:00Z'), to: at('2026-03-04T05:00:00Z') });
    assert.deepEqual(parts, {
      days: { from: at('2026-03-02T00:00:00Z'), to: at('2026-03-04T00:00:00Z') },
      hours: [{ from: at('2026-03-01T10:00:00Z'), to: at('2026-03-02T00:00:00Z') }, { from: at('2026-03-04T00:00:00Z'), to: at('2026-03-04T05:00:00Z') }],
    });
    // Across midnight without a whole day: hours only.
    assert.deepEqual(rangeParts({ from: at('2026-03-01T22:00:00Z'), to: at('2026-03-02T03:00:00Z') }), {
      days: null, hours: [{ from: at('2026-03-01T22:00:00Z'), to: at('2026-03-02T03:00:00Z') }],
    });
    // Whole days exactly: the edge hours are empty.
    assert.deepEqual(rangeParts({ from: at('2026-03-01T00:00:00Z'), to: at('2026-03-03T00:00:00Z') }).hours.map((hours) => hours.to.getTime() - hours.from.getTime()), [0, 0]);
  });

  it('defaults to the 30 days before now, rounds from down and to up to the hour, any offset', () => {
    const now = new Date('2026-03-31T10:20:00.000Z');
    const iso = (range: { from: Date; to: Date }) => [range.from.toISOString(), range.to.toISOString()];
    assert.deepEqual(iso(usageRangeOf({}, now)), ['2026-03-01T10:00:00.000Z', '2026-03-31T11:00:00.000Z']);
    assert.deepEqual(iso(usageRangeOf({ to: '2026-02-10T00:00:00Z' }, now)), ['2026-01-11T00:00:00.000Z', '2026-02-10T00:00:00.000Z'], 'the 30 days before to');
    assert.deepEqual(iso(usageRangeOf({ from: '2026-03-30T12:30:00+02:00', to: '2026-03-30t12:59:59.5z' }, now)), ['2026-03-30T10:00:00.000Z', '2026-03-30T13:00:00.000Z']);
  });

  it('refuses from after to and ranges past 366 days, naming from', () => {
    const now = new Date('2026-03-31T10:20:00.000Z');
    refused(() => usageRangeOf({ from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' }, now), 'from', /must not be after to/);
    refused(() => usageRangeOf({ from: '2025-01-01T00:00:00Z', to: '2026-01-03T00:00:00Z' }, now), 'from', /longer than 366 days/);
    assert.doesNotThrow(() => usageRangeOf({ from: '2024-01-01T00:00:00Z', to: '2025-01-01T00:00:00Z' }, now), '366 days (a leap year) is allowed');
    refused(() => usageRangeOf({ to: '2026-03-01T23:59:60Z' }, now), 'to', /RFC 3339/);
  });
});
