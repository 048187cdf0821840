// The checks of a schedule's spec as a client sends it (spec 2.15,
// api-decisions.md "Schedules"), one function per field, each naming its field
// and returning the canonical value with its default applied. Pure, apart from
// the lookups the caller passes in; the service decides which fields a request touches.
import type { AgentRecord } from '../agents/records';
import { InvalidArgumentError } from '../errors';
import { schemaViolations } from '../tools/tool-arguments';
import { formatScheduleDuration, parseScheduleDuration } from './schedule-duration';
import type { OverlapPolicy, ScheduleStatus } from './schedule-record';
import { validateScheduleRules, type ScheduleRules } from './schedule-spec';

export const DEFAULT_CATCHUP_WINDOW = '1m';
export const DEFAULT_OVERLAP_POLICY: OverlapPolicy = 'OVERLAP_POLICY_SKIP';
export const DEFAULT_SCHEDULE_STATUS: ScheduleStatus = 'AGENT_SCHEDULE_STATUS_ACTIVE';

/** @throws InvalidArgumentError naming `spec.initialMessage` when absent or blank */
export function checkInitialMessage(value: string | undefined): string {
  if (value === undefined) throw InvalidArgumentError.forField('spec.initialMessage', 'is required');
  if (value.trim() === '') throw InvalidArgumentError.forField('spec.initialMessage', 'must not be empty');
  return value;
}

/** @throws InvalidArgumentError naming the offending field under `spec.schedule` */
export function checkRules(value: unknown): ScheduleRules {
  if (value === undefined) throw InvalidArgumentError.forField('spec.schedule', 'is required');
  return validateScheduleRules(value, 'spec.schedule');
}

/** UNSPECIFIED or absent is SKIP (spec 2.15). */
export function checkOverlapPolicy(value: string | undefined): OverlapPolicy {
  return value === undefined || value === 'OVERLAP_POLICY_UNSPECIFIED' ? DEFAULT_OVERLAP_POLICY : (value as OverlapPolicy);
}

/**
 * UNSPECIFIED or absent is ACTIVE (spec 2.15).
 * @throws InvalidArgumentError naming `spec.status` for ARCHIVED, which only DELETE sets
 */
export function checkStatus(value: string | undefined): ScheduleStatus {
  if (value === undefined || value === 'AGENT_SCHEDULE_STATUS_UNSPECIFIED') return DEFAULT_SCHEDULE_STATUS;
  if (value === 'AGENT_SCHEDULE_STATUS_ARCHIVED') {
    throw InvalidArgumentError.forField('spec.status', 'AGENT_SCHEDULE_STATUS_ARCHIVED is set by DELETE; send ACTIVE or PAUSED');
  }
  return value as ScheduleStatus;
}

/**
 * The catch-up window in canonical form; absent is `1m`. At least 1s: a zero
 * window would skip a fire whose timer ran a millisecond late.
 * @throws InvalidArgumentError naming `spec.catchupWindow`
 */
export function checkCatchupWindow(value: string | undefined): string {
  if (value === undefined) return DEFAULT_CATCHUP_WINDOW;
  const seconds = parseScheduleDuration(value, 'spec.catchupWindow');
  if (seconds < 1) throw InvalidArgumentError.forField('spec.catchupWindow', 'must be at least 1s');
  return formatScheduleDuration(seconds);
}

/**
 * `data` against the agent's inputDataSchema, as objectives check it (ObjectiveService.resolve),
 * with fields named from `spec.data`.
 * @throws InvalidArgumentError with one violation per problem
 */
export function checkData(value: unknown, agent: Pick<AgentRecord, 'inputDataSchema'>): void {
  if (value === undefined || !agent.inputDataSchema) return;
  const violations = schemaViolations(value, agent.inputDataSchema, 'spec.data');
  if (violations.length) {
    throw new InvalidArgumentError(`spec.data does not satisfy the agent's inputDataSchema: ${violations[0].field} ${violations[0].description}`, violations);
  }
}
