// The discovery side of the service tools (issue 25 item 5): `search_tools`
// over the workspace's tools. SearchService.discoverTools ranks them over the
// full-text index (the model's query OR the variation's hints, at most
// `maxTools`, each scoring at least `rerankThreshold`); the tools found are
// then read whole, in one query, and built exactly as assigned tools are
// (objectiveToolOf, with the tool's own approval rule), so the objective can
// offer and run them from its next model call. The objective names them
// uniquely and writes the model's result (objective-service-tools.ts).
import { InvalidArgumentError } from '../errors';
import { objectiveToolOf } from '../objectives/objective-tool';
import type { ObjectiveTool } from '../objectives/objective-state';
import type { AgentsStore } from '../ports/agents-store';
import type { ServiceToolContext, ServiceToolOutcome, ToolDiscovery } from '../ports/service-tools';
import { ToolErrorType } from '../tools/tool-call-outcome';
import { discoveryTerms, type SearchService } from './search.service';

/** Reads tools whole by id (the agents store's `tools` table satisfies it). */
export type ToolsById = Pick<AgentsStore['tools'], 'findByIds'>;

export class ToolDiscoveryService implements ToolDiscovery {
  constructor(
    private readonly search: SearchService,
    private readonly tools: ToolsById,
  ) {}

  /**
   * The workspace's tools matching `query`, best first. A query without a
   * word (letters or digits) finds nothing, whatever the hints: hints refine
   * what the model asks for, they are not a search of their own. Never
   * throws for what the model or the variation wrote; a failing database does.
   */
  async searchTools(context: ServiceToolContext, query: string): Promise<ServiceToolOutcome> {
    const { discovery } = context;
    if (!discovery) return { ok: false, content: 'search_tools is not offered to this objective', errorType: ToolErrorType.INVALID_ARGUMENTS };
    if (!discoveryTerms([query]).length) return { ok: true, content: '', discoveredTools: [] };
    let hits;
    try {
      hits = await this.search.discoverTools(context.workspaceId, { query, hints: discovery.hints, maxTools: discovery.maxTools, rerankThreshold: discovery.rerankThreshold });
    } catch (error) {
      // Settings stored before their ranges were checked (a negative threshold): the model reads why, the objective goes on.
      if (error instanceof InvalidArgumentError) return { ok: false, content: `search_tools cannot search: ${error.message}`, errorType: ToolErrorType.INVALID_ARGUMENTS };
      throw error;
    }
    if (!hits.length) return { ok: true, content: '', discoveredTools: [] };
    const records = await this.tools.findByIds(hits.map((hit) => hit.id));
    // Only the workspace's own (the ranking already is), in the ranking's order; a tool deleted since is left out.
    const byId = new Map(records.filter((record) => record.workspaceId === context.workspaceId && record.accountId === context.accountId).map((record) => [record.id, record]));
    const found: ObjectiveTool[] = hits.flatMap((hit) => {
      const record = byId.get(hit.id);
      return record ? [objectiveToolOf(record, record.requiresApproval)] : [];
    });
    return { ok: true, content: '', discoveredTools: found };
  }
}
