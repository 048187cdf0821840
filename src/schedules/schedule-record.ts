// An agent schedule (spec 2.15, api-decisions.md "Schedules") as the schedule
// actor keeps it and projects it: the whole row, written in the actor's fenced
// turn whenever its spec, status or counters change (`ScheduleChange`). The API
// validates a create or update, then hands it to the actor, so the row and the
// actor's timer never disagree.
import type { ScheduleRules } from './schedule-spec';

export const SCHEDULE_KIND = 'schedule';

export const SCHEDULE_STATUSES = ['AGENT_SCHEDULE_STATUS_ACTIVE', 'AGENT_SCHEDULE_STATUS_PAUSED', 'AGENT_SCHEDULE_STATUS_ARCHIVED'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

export const OVERLAP_POLICIES = ['OVERLAP_POLICY_ALLOW', 'OVERLAP_POLICY_SKIP'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** The user's part of a schedule, validated and in canonical form (durations as `1h30m`). */
export interface ScheduleSpec {
  initialMessage: string;
  schedule: ScheduleRules;
  data?: unknown;
  overlapPolicy: OverlapPolicy;
  status: ScheduleStatus;
  variationId?: string;
  /** How late a missed fire may still run (a duration string). @default '1m' */
  catchupWindow: string;
}

/** Counters the actor keeps (api-decisions.md: info). */
export interface ScheduleInfo {
  nextFireAt: string | null;
  lastFiredAt: string | null;
  lastObjectiveId: string | null;
  fireCount: number;
  skipCount: number;
  /** Why the last fire did not create an objective (agent archived, model disabled…), if it did not. */
  lastError: string | null;
}

/** The row of agent_schedules, JSON-safe. */
export interface ScheduleRecord {
  id: string;
  accountId: string;
  workspaceId: string;
  agentId: string;
  profileId: string;
  name: string;
  externalId: string | null;
  labels: Record<string, string>;
  bundleKey: string | null;
  spec: ScheduleSpec;
  info: ScheduleInfo;
  createdAt: string;
  updatedAt: string;
  /** Counts the actor's changes; a projector keeps the highest. */
  revision: number;
}

/** The schedule actor's read-model change: the whole row as it is now. */
export interface ScheduleChange {
  type: 'schedule';
  schedule: ScheduleRecord;
}

export function initialScheduleInfo(): ScheduleInfo {
  return { nextFireAt: null, lastFiredAt: null, lastObjectiveId: null, fireCount: 0, skipCount: 0, lastError: null };
}
