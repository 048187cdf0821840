// The batch statement's text is built once per shape of batch, and journal
// payloads the actor serialized already are sent as that text.
import assert from 'node:assert/strict';
import { batchStatement, journalRowsJson } from '../../persistence/runtime/turn-statement';
import type { TurnWrite } from '../../persistence/runtime/turn-writer';
import type { ProjectionBuilder } from '../../src/ports/actor-behavior';
import { turnWriteOf } from '../support/turn-writes';

function turnOf(actorId: string, overrides: Partial<TurnWrite> = {}): TurnWrite {
  return turnWriteOf({
    fence: { shard: 3, epoch: 7 },
    kind: 'counter',
    actorId,
    key: `counter:${actorId}`,
    entry: { sequenceNr: 1, commandId: `cmd-${actorId}`, payload: { events: [{ added: actorId.length }] } },
    ...overrides,
  });
}

/** The highest $n the text names. */
function highestParameter(text: string): number {
  return Math.max(...[...text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])));
}

describe('batch statement', () => {
  const noProjections = new Map<string, ProjectionBuilder>();

  it('writes the journal rows with their payloads, taking a payload serialized already as it is', () => {
    const serialized = '{"events":[],"reply":"kept as written"}';
    const turns = [
      turnOf('a'),
      turnOf('b', { entry: { sequenceNr: 4, commandId: null, payload: { events: [], reply: 'kept as written' }, payloadJson: serialized } }),
    ];
    const text = journalRowsJson(turns, { withFence: true });
    assert.ok(text.includes(`"payload":${serialized}`), text);
    assert.deepEqual(JSON.parse(text), [
      { persistence_key: 'counter:a', sequence_nr: 1, command_id: 'cmd-a', payload: { events: [{ added: 1 }] }, shard: 3, epoch: 7 },
      { persistence_key: 'counter:b', sequence_nr: 4, command_id: null, payload: { events: [], reply: 'kept as written' }, shard: 3, epoch: 7 },
    ]);
    assert.deepEqual(JSON.parse(journalRowsJson([turnOf('a')]))[0], { persistence_key: 'counter:a', sequence_nr: 1, command_id: 'cmd-a', payload: { events: [{ added: 1 }] } });
  });

  it('gives batches of one shape the same text and name, with their own parameters', () => {
    const first = batchStatement([turnOf('a'), turnOf('b')], noProjections)!;
    const second = batchStatement([turnOf('c', { processedCommandIds: ['x'] })], noProjections)!;
    const third = batchStatement([turnOf('d', { processedCommandIds: ['y', 'z'] })], noProjections)!;
    assert.notEqual(first.name, second.name);
    assert.equal(second.name, third.name);
    assert.equal(second.text, third.text);
    assert.notDeepEqual(second.parameters, third.parameters);
    assert.ok(JSON.stringify(third.parameters).includes('"y","z"'));
    for (const statement of [first, second, third]) assert.equal(highestParameter(statement.text), statement.parameters.length, statement.text);
  });

  it('numbers a projection\'s own parameters after the batch\'s, whatever the parts before them', () => {
    const statements = ['INSERT INTO counters (id, total) SELECT * FROM unnest($1::text[], $2::int[])', 'SELECT $2::int[]'];
    const projections = new Map<string, ProjectionBuilder>([
      ['counter', (changes) => ({ statements, parameters: [changes.map((change) => change.actorId), changes.map(() => 1)] })],
    ]);
    const plain = batchStatement([turnOf('a', { changes: [{ added: 1 }] })], projections)!;
    const withReminder = batchStatement([turnOf('a', {
      changes: [{ added: 1 }],
      remindersSet: [{ name: 'tick', dueAt: new Date(0), payload: null }],
    })], projections)!;
    assert.notEqual(plain.name, withReminder.name);
    for (const statement of [plain, withReminder]) {
      const count = statement.parameters.length;
      assert.equal(highestParameter(statement.text), count);
      assert.ok(statement.text.includes(`unnest($${count - 1}::text[], $${count}::int[])`), statement.text);
      assert.ok(statement.text.includes(`SELECT $${count}::int[]`), statement.text);
      assert.deepEqual(statement.parameters.slice(-2), [['a'], [1]]);
    }
  });

  it('declines a batch whose kind has changes but no projection', () => {
    assert.equal(batchStatement([turnOf('a', { changes: [{ added: 1 }] })], noProjections), null);
  });
});
