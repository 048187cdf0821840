// The durable consumer spec with its defaults and checks, shared by both
// implementations of EventConsumers so they accept and refuse the same specs.
import { InvalidArgumentError } from '../errors';
import type { DurableConsumerSpec } from '../ports/event-consumer';
import { isValidSubjectPattern } from './subject-pattern';

export const DEFAULT_ACK_WAIT_MS = 30_000;
export const DEFAULT_MAX_ACK_PENDING = 1000;
export const DEFAULT_ERROR_REDELIVERY_DELAY_MS = 1000;

/** A spec with every default filled in. */
export type ResolvedConsumerSpec = Required<Omit<DurableConsumerSpec, 'filterSubject' | 'takeOverFrom' | 'notBefore'>> & {
  filterSubject: string | undefined;
  takeOverFrom: string | undefined;
  notBefore: Date | undefined;
};

/** Names JetStream accepts for streams and durables, kept to a portable subset. */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

function positiveInteger(field: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw InvalidArgumentError.forField(field, 'must be a positive integer');
  return value;
}

/**
 * Applies the defaults and checks the spec.
 * @throws InvalidArgumentError naming the faulty field.
 */
export function resolveConsumerSpec(spec: DurableConsumerSpec): ResolvedConsumerSpec {
  if (!NAME.test(spec.stream)) throw InvalidArgumentError.forField('stream', 'must match [A-Za-z0-9_-]{1,64}');
  if (!NAME.test(spec.durableName)) throw InvalidArgumentError.forField('durableName', 'must match [A-Za-z0-9_-]{1,64}');
  if (spec.takeOverFrom !== undefined && !NAME.test(spec.takeOverFrom)) throw InvalidArgumentError.forField('takeOverFrom', 'must match [A-Za-z0-9_-]{1,64}');
  if (spec.notBefore !== undefined && Number.isNaN(spec.notBefore.getTime())) throw InvalidArgumentError.forField('notBefore', 'must be a valid date');
  // '>' alone is "everything", the same as no filter; normalising keeps one spelling per meaning.
  const filterSubject = spec.filterSubject === '>' ? undefined : spec.filterSubject;
  if (filterSubject !== undefined && !isValidSubjectPattern(filterSubject)) throw InvalidArgumentError.forField('filterSubject', 'is not a valid subject pattern');
  const errorRedeliveryDelayMs = spec.errorRedeliveryDelayMs ?? DEFAULT_ERROR_REDELIVERY_DELAY_MS;
  if (!Number.isInteger(errorRedeliveryDelayMs) || errorRedeliveryDelayMs < 0) throw InvalidArgumentError.forField('errorRedeliveryDelayMs', 'must be an integer ≥ 0');
  return {
    stream: spec.stream,
    durableName: spec.durableName,
    filterSubject,
    ackWaitMs: positiveInteger('ackWaitMs', spec.ackWaitMs ?? DEFAULT_ACK_WAIT_MS),
    maxAckPending: positiveInteger('maxAckPending', spec.maxAckPending ?? DEFAULT_MAX_ACK_PENDING),
    errorRedeliveryDelayMs,
    takeOverFrom: spec.takeOverFrom,
    notBefore: spec.notBefore,
  };
}
