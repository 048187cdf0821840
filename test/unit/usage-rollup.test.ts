// The usage roll-ups' pure rules (src/usage): the rows a batch of deltas adds
// to, how a range of hours splits into whole days and edge hours, and the
// report's range (defaults, rounding, refusals naming the field).
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors';
import { HOUR_MS, rangeTerms, rollupRowsOf, type UsageDelta } from '../../src/usage/usage-rollup';
import { usageRangeOf } from '../../src/usage/usage.service';

const delta = (createdAt: string, overrides: Partial<UsageDelta> = {}): UsageDelta => ({
  createdAt, agentId: 'agent_1', variationId: 'agentvar_1', tenantId: 'tenant_1', modelId: 'builtin/scripted',
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
  it('sums a batch into one row of each bucket size (hour, day, 8 days) per dimension, sorted by key, with each key\'s first and last hour', () => {
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
      { bucketHours: 192, bucketStart: '2026-02-28T00:00:00.000Z', promptTokens: 20, objectiveCount: 1 },
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

  it('covers each hour of a range exactly once with its terms (8-day buckets, days, hours, some taken away), reading few rows', () => {
    const origin = Date.parse('2026-02-20T00:00:00Z') / HOUR_MS;
    const check = (fromHour: number, toHour: number): number => {
      const terms = rangeTerms({ from: new Date(fromHour * HOUR_MS), to: new Date(toHour * HOUR_MS) });
      const coverage = new Map<number, number>();
      let rows = 0;
      for (const term of terms) {
        for (let hour = term.from.getTime() / HOUR_MS; hour < term.to.getTime() / HOUR_MS; hour++) coverage.set(hour, (coverage.get(hour) ?? 0) + term.sign);
        assert.equal(term.from.getTime() % (term.bucketHours * HOUR_MS), 0, 'terms start on their bucket');
        assert.equal(term.to.getTime() % (term.bucketHours * HOUR_MS), 0, 'terms end on their bucket');
        rows += (term.to.getTime() - term.from.getTime()) / (term.bucketHours * HOUR_MS);
      }
      for (const [hour, count] of coverage) assert.equal(count, hour >= fromHour && hour < toHour ? 1 : 0, `hour ${hour} of [${fromHour}, ${toHour})`);
      for (let hour = fromHour; hour < toHour; hour++) assert.equal(coverage.get(hour), 1);
      return rows;
    };
    let worst30Days = 0;
    for (let from = origin; from < origin + 8 * 24; from++) {
      for (const hours of [0, 1, 5, 23, 24, 25, 47, 100, 191, 192, 193, 400, 30 * 24, ...(from % 24 === 0 ? [366 * 24] : [])]) {
        const rows = check(from, from + hours);
        if (hours === 30 * 24) worst30Days = Math.max(worst30Days, rows);
      }
    }
    assert.ok(worst30Days <= 32, `a 30-day range reads at most 32 rows per key (${worst30Days}), where hours and days alone read up to 53`);
    // Whole 8-day buckets exactly: one term.
    const whole = rangeTerms({ from: new Date('2026-02-28T00:00:00Z'), to: new Date('2026-03-16T00:00:00Z') });
    assert.deepEqual(whole.map((term) => [term.bucketHours, term.sign, term.from.toISOString(), term.to.toISOString()]), [[192, 1, '2026-02-28T00:00:00.000Z', '2026-03-16T00:00:00.000Z']]);
  });

  it('defaults to the 30 days before now, rounds from down and to up to the hour, any offset', () => {
    const now = new Date('2026-03-31T10:20:00.000Z');
    const iso = (range: { from: Date; to: Date }) => [range.from.toISOString(), range.to.toISOString()];
    assert.deepEqual(iso(usageRangeOf({}, now)), ['2026-03-01T10:00:00.000Z', '2026-03-31T11:00:00.000Z']);
    assert.deepEqual(iso(usageRangeOf({ to: '2026-02-10T00:00:00Z' }, now)), ['2026-01-11T00:00:00.000Z', '2026-02-10T00:00:00.000Z'], 'the 30 days before to');
    assert.deepEqual(iso(usageRangeOf({ from: '2026-03-30T12:30:00+02:00', to: '2026-03-30t12:59:59.5z' }, now)), ['2026-03-30T10:00:00.000Z', '2026-03-30T13:00:00.000Z']);
  });

  it('refuses from and to outside the years 0001 to 9999 once rounded, naming the field', () => {
    const now = new Date('2026-03-31T10:20:00.000Z');
    refused(() => usageRangeOf({ from: '9999-12-31T00:00:00Z', to: '9999-12-31T23:59:59Z' }, now), 'to', /within the years 0001 to 9999/);
    refused(() => usageRangeOf({ to: '0000-01-10T00:00:00Z' }, now), 'to', /within the years 0001 to 9999/);
    refused(() => usageRangeOf({ from: '0000-12-31T23:30:00Z', to: '0001-01-02T00:00:00Z' }, now), 'from', /within the years 0001 to 9999/);
    const iso = (range: { from: Date; to: Date }) => [range.from.toISOString(), range.to.toISOString()];
    assert.deepEqual(iso(usageRangeOf({ from: '9999-12-31T00:00:00Z', to: '9999-12-31T22:59:59Z' }, now)), ['9999-12-31T00:00:00.000Z', '9999-12-31T23:00:00.000Z']);
    assert.deepEqual(iso(usageRangeOf({ to: '0001-01-10T00:00:00Z' }, now)), ['0001-01-01T00:00:00.000Z', '0001-01-10T00:00:00.000Z'], 'the default from stops at year 0001');
  });

  it('refuses from after to and ranges past 366 days, naming from', () => {
    const now = new Date('2026-03-31T10:20:00.000Z');
    refused(() => usageRangeOf({ from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' }, now), 'from', /must not be after to/);
    refused(() => usageRangeOf({ from: '2025-01-01T00:00:00Z', to: '2026-01-03T00:00:00Z' }, now), 'from', /longer than 366 days/);
    assert.doesNotThrow(() => usageRangeOf({ from: '2024-01-01T00:00:00Z', to: '2025-01-01T00:00:00Z' }, now), '366 days (a leap year) is allowed');
    refused(() => usageRangeOf({ to: '2026-03-01T23:59:60Z' }, now), 'to', /RFC 3339/);
  });
});
