// Wire shapes of agent schedules (interface-spec 2.15, api-decisions.md
// "Schedules"): the AgentSchedule resource, its create and PATCH bodies, the
// list's status filter, the trigger answer and the upcoming fire times. The
// schemas check shapes and types; ranges, durations and zone names are checked
// by validateScheduleRules (src/schedules/schedule-spec.ts), which names the field.
import { Type, type Static } from '@sinclair/typebox';
import { idPattern } from '../ids';
import { CreateMetadata, DateTime, ResourceMetadata, Strict, UpdateBody } from './common.schema';
import { MESSAGE_MAX } from './objectives.schema';

export const ScheduleStatusSchema = Type.Union([
  Type.Literal('AGENT_SCHEDULE_STATUS_UNSPECIFIED'),
  Type.Literal('AGENT_SCHEDULE_STATUS_ACTIVE'),
  Type.Literal('AGENT_SCHEDULE_STATUS_PAUSED'),
  Type.Literal('AGENT_SCHEDULE_STATUS_ARCHIVED'),
]);

export const OverlapPolicySchema = Type.Union([
  Type.Literal('OVERLAP_POLICY_UNSPECIFIED'),
  Type.Literal('OVERLAP_POLICY_ALLOW'),
  Type.Literal('OVERLAP_POLICY_SKIP'),
]);

const Range = Strict({
  start: Type.Integer(),
  end: Type.Optional(Type.Integer({ description: 'Inclusive; default: start' })),
  step: Type.Optional(Type.Integer({ description: 'At least 1; default 1' })),
}, { description: 'An inclusive range of values: start, start + step, ... up to end' });
const Ranges = (description: string) => Type.Optional(Type.Array(Range, { description }));

export const ScheduleCalendarSchema = Strict({
  comment: Type.Optional(Type.String({ description: 'At most 200 characters' })),
  second: Ranges('0-59; empty or absent: 0'),
  minute: Ranges('0-59; empty or absent: 0'),
  hour: Ranges('0-23; empty or absent: 0'),
  dayOfMonth: Ranges('1-31; empty or absent: any day'),
  month: Ranges('1-12; empty or absent: any month'),
  dayOfWeek: Ranges('0-6, 0 = Sunday; empty or absent: any day'),
}, { description: 'A wall-clock rule: every field must match (day of month AND day of week)' });

export const ScheduleIntervalSchema = Strict({
  every: Type.String({ description: 'A duration such as 90s, 15m, 1h30m or 1d; at least 1s; echoed in canonical form' }),
  offset: Type.Optional(Type.String({ description: 'A duration less than every; default 0s' })),
});

export const ScheduleRulesSchema = Strict({
  calendars: Type.Optional(Type.Array(ScheduleCalendarSchema)),
  intervals: Type.Optional(Type.Array(ScheduleIntervalSchema)),
  timezone: Type.String({ description: 'An IANA time-zone name such as Europe/Berlin or UTC' }),
}, { description: 'At least one calendar or interval; the rules are OR-ed, an instant two rules share fires once' });

const InitialMessage = Type.String({ minLength: 1, maxLength: MESSAGE_MAX, description: 'The first user message of each objective the schedule creates' });
const Data = Type.Unknown({ description: "Input data of each objective; must satisfy the agent's inputDataSchema when it has one" });
const VariationId = Type.String({ pattern: idPattern('agentVariation'), description: "A variation of the agent; absent: the agent's selection mode chooses on each fire" });
const CatchupWindow = Type.String({ description: 'How late a missed fire may still run (a duration, at least 1s); default 1m' });

/** The spec a client sends (create and PATCH): every field but initialMessage and schedule has a default. */
const ScheduleSpecInput = {
  data: Type.Optional(Data),
  overlapPolicy: Type.Optional(Type.Union(OverlapPolicySchema.anyOf, { description: 'UNSPECIFIED or absent: SKIP' })),
  status: Type.Optional(Type.Union(ScheduleStatusSchema.anyOf, { description: 'UNSPECIFIED or absent: ACTIVE on create; ARCHIVED only through DELETE' })),
  variationId: Type.Optional(VariationId),
  catchupWindow: Type.Optional(CatchupWindow),
};

export const CreateScheduleBody = Strict({
  metadata: CreateMetadata,
  spec: Strict({ initialMessage: InitialMessage, schedule: ScheduleRulesSchema, ...ScheduleSpecInput }),
});
export type CreateScheduleBody = Static<typeof CreateScheduleBody>;

export const UpdateScheduleBody = UpdateBody(Strict({
  initialMessage: Type.Optional(InitialMessage),
  schedule: Type.Optional(ScheduleRulesSchema),
  ...ScheduleSpecInput,
}));
export type UpdateScheduleBody = Static<typeof UpdateScheduleBody>;

export const AgentSchedule = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({
    initialMessage: Type.String(),
    schedule: ScheduleRulesSchema,
    data: Type.Optional(Type.Unknown()),
    overlapPolicy: OverlapPolicySchema,
    status: ScheduleStatusSchema,
    variationId: Type.Optional(Type.String()),
    catchupWindow: Type.String({ description: 'Canonical duration' }),
  }),
  info: Type.Object({
    nextFireAt: Type.Optional(Type.String({ format: 'date-time', description: 'Absent while PAUSED or ARCHIVED, and when the rules never fire again' })),
    lastFiredAt: Type.Optional(DateTime),
    lastObjectiveId: Type.Optional(Type.String()),
    fireCount: Type.Integer(),
    skipCount: Type.Integer({ description: 'Fires skipped by the overlap policy or missed beyond the catch-up window' }),
    lastError: Type.Optional(Type.String({ description: 'Why the last fire created no objective, if it did not. Not in the spec.' })),
  }),
});
export type AgentSchedule = Static<typeof AgentSchedule>;

export const ScheduleListFilters = {
  status: Type.Optional(Type.Union(ScheduleStatusSchema.anyOf, { description: 'AGENT_SCHEDULE_STATUS_UNSPECIFIED or absent: every status' })),
};

export const TriggerScheduleBody = Strict({});

export const TriggerScheduleResponse = Type.Object({
  schedule: AgentSchedule,
  objectiveId: Type.Optional(Type.String({ description: 'The objective the fire created; absent when the overlap policy skipped it or it failed (info.lastError says why)' })),
});
export type TriggerScheduleResponse = Static<typeof TriggerScheduleResponse>;

export const MAX_UPCOMING = 1000;
export const DEFAULT_UPCOMING = 10;

export const UpcomingQuery = Strict({
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_UPCOMING, description: `How many fire times; default ${DEFAULT_UPCOMING}` })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Fire times strictly after this instant; default now' })),
});

export const UpcomingFireTimes = Type.Object({
  fireTimes: Type.Array(Type.String({ format: 'date-time' }), { description: 'Ascending UTC instants (`2027-03-14T07:00:00Z`); fewer than count when the rules stop firing' }),
});
export type UpcomingFireTimes = Static<typeof UpcomingFireTimes>;
