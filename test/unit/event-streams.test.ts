// The pure rules of the event streams: NATS subject patterns (in process and
// as the regular expression the embedded log filters with in SQL), merging
// stream declarations, and the durable consumer spec's defaults and checks.
import assert from 'node:assert/strict';
import { InvalidArgumentError } from '../../src/errors';
import { resolveConsumerSpec } from '../../src/events/consumer-spec';
import { mergeStreamDeclarations } from '../../src/events/stream-declarations';
import { isValidSubjectPattern, subjectMatches, subjectPatternRegex } from '../../src/events/subject-pattern';

describe('subjectMatches(pattern, subject)', () => {
  const cases: Array<[string, string, boolean]> = [
    ['a.b', 'a.b', true],
    ['a.b', 'a.b.c', false],
    ['a.*', 'a.b', true],
    ['a.*', 'a', false],
    ['a.*', 'a.b.c', false],
    ['a.>', 'a.b', true],
    ['a.>', 'a.b.c', true],
    ['a.>', 'a', false],
    ['>', 'a', true],
    ['*.b.>', 'x.b.y.z', true],
    ['*.b.>', 'x.c.y', false],
    ['objective_events.*.*.*.*.objective.completed', 'objective_events.acc.ws.ag.obj.objective.completed', true],
  ];
  for (const [pattern, subject, expected] of cases) {
    it(`${expected ? 'matches' : 'does not match'} ${subject} with ${pattern}`, () => {
      assert.equal(subjectMatches(pattern, subject), expected);
    });
  }

  it('agrees with its regular expression, special characters included', () => {
    const patterns = ['a.b', 'a.*', 'a.>', '>', 'x+y.(z)', 'a.b-c:d.*', 'a.$.>', 'q?.[r]'];
    const subjects = ['a', 'a.b', 'a.b.c', 'x+y.(z)', 'xxy.(z)', 'a.b-c:d.e', 'a.$.1', 'q?.[r]', 'q.r'];
    for (const pattern of patterns) {
      for (const subject of subjects) {
        assert.equal(new RegExp(subjectPatternRegex(pattern)).test(subject), subjectMatches(pattern, subject), `${pattern} ~ ${subject}`);
      }
    }
  });
});

describe('isValidSubjectPattern(pattern)', () => {
  it('accepts whole-token wildcards with > last', () => {
    assert.deepEqual(['a.b', 'a.*.c', 'a.>', '>', '*'].map(isValidSubjectPattern), [true, true, true, true, true]);
  });

  it('refuses empty tokens, whitespace, partial wildcards and > before the end', () => {
    assert.deepEqual(['', 'a..b', 'a.b ', 'a.b*', 'a.>.b', 'a.>x'].map(isValidSubjectPattern), [false, false, false, false, false, false]);
  });
});

describe('mergeStreamDeclarations(streams)', () => {
  it('keeps the shortest maximum age declared for a stream, and none when none is declared', () => {
    assert.deepEqual(
      mergeStreamDeclarations([
        { name: 'OBJECTIVE_EVENTS', subjects: ['objective_events.>'], maxAgeMs: 7_000 },
        { name: 'OBJECTIVE_EVENTS', subjects: ['objective_events.>'] },
        { name: 'OBJECTIVE_EVENTS', subjects: ['objective_events.>'], maxAgeMs: 5_000 },
        { name: 'AGENTRT_EVENTS', subjects: ['agentrt.events.>'] },
      ]),
      [
        { name: 'OBJECTIVE_EVENTS', subjects: ['objective_events.>'], maxAgeMs: 5_000 },
        { name: 'AGENTRT_EVENTS', subjects: ['agentrt.events.>'] },
      ],
    );
  });

  it('unites the subjects of declarations with the same name, in first-seen order', () => {
    assert.deepEqual(
      mergeStreamDeclarations([
        { name: 'AGENTRT_EVENTS', subjects: ['agentrt.events.>'] },
        { name: 'OBJECTIVE_EVENTS', subjects: ['objective_events.>'] },
        { name: 'AGENTRT_EVENTS', subjects: ['agentrt.extra.>', 'agentrt.events.>'] },
      ]),
      [
        { name: 'AGENTRT_EVENTS', subjects: ['agentrt.events.>', 'agentrt.extra.>'] },
        { name: 'OBJECTIVE_EVENTS', subjects: ['objective_events.>'] },
      ],
    );
  });
});

describe('resolveConsumerSpec(spec)', () => {
  it('fills in the defaults', () => {
    assert.deepEqual(resolveConsumerSpec({ stream: 'OBJECTIVE_EVENTS', durableName: 'webhooks' }), {
      stream: 'OBJECTIVE_EVENTS',
      durableName: 'webhooks',
      filterSubject: undefined,
      ackWaitMs: 30_000,
      maxAckPending: 1000,
      errorRedeliveryDelayMs: 1000,
      takeOverFrom: undefined,
      notBefore: undefined,
    });
  });

  it('treats the filter > as no filter', () => {
    assert.equal(resolveConsumerSpec({ stream: 'S', durableName: 'd', filterSubject: '>' }).filterSubject, undefined);
  });

  it('names the faulty field', () => {
    const faults: Array<[Record<string, unknown>, string]> = [
      [{ stream: 'has.dot' }, 'stream'],
      [{ durableName: '' }, 'durableName'],
      [{ filterSubject: 'a..b' }, 'filterSubject'],
      [{ ackWaitMs: 0 }, 'ackWaitMs'],
      [{ maxAckPending: 1.5 }, 'maxAckPending'],
      [{ errorRedeliveryDelayMs: -1 }, 'errorRedeliveryDelayMs'],
      [{ takeOverFrom: 'agentrt.webhooks' }, 'takeOverFrom'],
      [{ notBefore: new Date('not a date') }, 'notBefore'],
    ];
    for (const [fault, field] of faults) {
      assert.throws(
        () => resolveConsumerSpec({ stream: 'S', durableName: 'd', ...fault }),
        (error: unknown) => error instanceof InvalidArgumentError && error.fieldViolations[0]?.field === field,
        field,
      );
    }
  });
});
