// What deleting an agent (src/agents) does to its schedules: archives them as
// DELETE of each schedule does, through their actors. The schedule service
// (src/schedules) implements it; the agents area does not know schedules beyond this.

export interface AgentScheduleArchive {
  /**
   * Archives every schedule of the agent that is not ARCHIVED, one after the
   * other. Idempotent: an ARCHIVED schedule is not asked again, so calling it
   * after a failure archives what is left.
   * @throws the first error of a schedule's actor (UNAVAILABLE on a node without an actor runtime); the ones before it stay archived
   */
  archiveSchedulesOf(workspaceId: string, agentId: string): Promise<void>;
}
