// Tool discovery in the objective (issue 25 item 5), without I/O: which
// variation settings turn it on and with what (discoverySettingsOf), and what
// the loop does with the tools a `search_tools` call found (driven through the
// behaviour): a tool already offered is listed under its name and not added
// again, one found twice (in one result or by two searches) is added once,
// names taken by offered tools, by service tools or by an earlier found tool
// get a suffix, and from the next model call the found tools are offered after
// the configured ones and run with their own approval rule.
import assert from 'node:assert/strict';
import type { VariationRecord } from '../../../src/agents/records';
import { discoveryOf, discoverySettingsOf } from '../../../src/objectives/objective-discovery';
import { objectiveToolOf } from '../../../src/objectives/objective-tool';
import type { ObjectiveTool } from '../../../src/objectives/objective-state';
import { SERVICE_TOOL_EFFECT, type ServiceToolCallInput, type ServiceToolOutcome } from '../../../src/ports/service-tools';
import type { ToolRecord } from '../../../src/tools/records';
import { ObjectiveDriver } from './objective-driver';

type DiscoveryFields = Pick<VariationRecord, 'progressiveDiscovery' | 'toolSelection'>;
const variation = (fields: Partial<DiscoveryFields>): DiscoveryFields => ({ progressiveDiscovery: null, toolSelection: null, ...fields });

function toolRecord(id: string, name: string, overrides: Partial<ToolRecord> = {}): ToolRecord {
  const at = new Date('2026-11-20T10:00:00.000Z');
  return {
    id, accountId: 'acc_1', workspaceId: 'ws_1', name, externalId: null, labels: {}, profileId: null, bundleKey: null, createdAt: at, updatedAt: at,
    description: `the ${id} tool`, inputSchema: null, requiresApproval: false, kind: 'http',
    httpUrl: `https://tools.example.com/${id}`, httpMethod: 'POST', httpHeaders: null, httpTimeoutMs: null, mcpServerUrl: null, mcpToolName: null, sourceToolSetId: null,
    ...overrides,
  };
}
const found = (id: string, name: string, overrides: Partial<ToolRecord> = {}): ObjectiveTool => objectiveToolOf(toolRecord(id, name, overrides), overrides.requiresApproval ?? false);
const DISCOVERY = { hints: [], maxTools: 10, rerankThreshold: 0 };

describe('tool discovery in the objective', () => {
  describe('discoverySettingsOf', () => {
    it('is off without settings, and with toolSelection that allows none', () => {
      assert.equal(discoverySettingsOf(variation({})), null);
      assert.equal(discoverySettingsOf(variation({ toolSelection: {} })), null);
      assert.equal(discoverySettingsOf(variation({ toolSelection: { assignedTools: {} } })), null);
      assert.equal(discoverySettingsOf(variation({ toolSelection: { assignedTools: { allowDiscovery: false } } })), null);
      assert.deepEqual(discoveryOf(variation({})), {}, 'no discovery field at all on the start');
    });

    it('takes progressiveDiscovery first, with defaults maxTools 10 and rerankThreshold 0, ignoring toolSelection', () => {
      assert.deepEqual(discoverySettingsOf(variation({ progressiveDiscovery: {} })), { hints: [], maxTools: 10, rerankThreshold: 0 });
      assert.deepEqual(
        discoverySettingsOf(variation({ progressiveDiscovery: { hints: ['billing'], maxTools: 3, rerankThreshold: 0.25 }, toolSelection: { autoDiscovery: { hints: ['crm'], maxTools: 7 } } })),
        { hints: ['billing'], maxTools: 3, rerankThreshold: 0.25 },
      );
      assert.deepEqual(
        discoverySettingsOf(variation({ progressiveDiscovery: { rerankThreshold: 0.5 }, toolSelection: { assignedTools: { allowDiscovery: false }, autoDiscovery: { maxTools: 7 } } })),
        { hints: [], maxTools: 10, rerankThreshold: 0.5 },
      );
      assert.deepEqual(discoveryOf(variation({ progressiveDiscovery: { maxTools: 2 } })), { discovery: { hints: [], maxTools: 2, rerankThreshold: 0 } });
    });

    it('takes toolSelection.autoDiscovery or allowDiscovery true otherwise, with no threshold; allowDiscovery false overrides autoDiscovery', () => {
      assert.deepEqual(discoverySettingsOf(variation({ toolSelection: { autoDiscovery: { hints: ['crm'], maxTools: 7 } } })), { hints: ['crm'], maxTools: 7, rerankThreshold: 0 });
      assert.deepEqual(discoverySettingsOf(variation({ toolSelection: { autoDiscovery: {} } })), { hints: [], maxTools: 10, rerankThreshold: 0 });
      assert.deepEqual(discoverySettingsOf(variation({ toolSelection: { assignedTools: { allowDiscovery: true } } })), { hints: [], maxTools: 10, rerankThreshold: 0 });
      assert.deepEqual(
        discoverySettingsOf(variation({ toolSelection: { assignedTools: { allowDiscovery: true }, autoDiscovery: { maxTools: 4 } } })),
        { hints: [], maxTools: 4, rerankThreshold: 0 },
      );
      assert.equal(discoverySettingsOf(variation({ toolSelection: { assignedTools: { allowDiscovery: false }, autoDiscovery: { maxTools: 4 } } })), null);
    });
  });

  describe('the tools a search found', () => {
    const assigned = found('tool_1', 'lookup');

    /** Starts an objective with discovery and has the model call search_tools once per query, in one turn. */
    async function searchTurn(driver: ObjectiveDriver, queries: string[]): Promise<string[]> {
      await driver.modelAnswers({ content: null, toolCalls: queries.map((query, index) => ({ id: `s${index}`, name: 'search_tools', arguments: JSON.stringify({ query }) })) });
      return queries.map((_, index) => driver.callId(`s${index}`));
    }
    const results = (driver: ObjectiveDriver) => driver.journal.flatMap((event) => (event.type === 'recorded' && event.record.type === 'TOOL_RESULT' ? [(event.record.data.toolResult as { content: string }).content] : []));

    it('adds the tools not offered yet once, named uniquely, and offers them from the next model call after the configured ones', async () => {
      const driver = new ObjectiveDriver();
      await driver.start({ tools: [assigned], discovery: DISCOVERY });
      assert.deepEqual(driver.modelRequest().tools.map((tool) => tool.name), ['lookup', 'search_tools']);
      const [first, second] = await searchTurn(driver, ['look things up', 'more']);

      const effect = driver.running.get(first)!;
      assert.equal(effect.name, SERVICE_TOOL_EFFECT);
      assert.deepEqual((effect.input as ServiceToolCallInput).context.discovery, DISCOVERY);
      const other = found('tool_2', 'lookup');
      const namedLikeService = found('tool_3', 'search_tools');
      const twice = found('tool_4', 'crm', { requiresApproval: true });
      await driver.succeed(first, { ok: true, content: '', discoveredTools: [assigned, other, namedLikeService, twice, twice] } satisfies ServiceToolOutcome);
      // Still in the same turn: the second search finds one of those again and a tool named like the renamed one.
      const takenName = found('tool_5', 'lookup_2');
      await driver.succeed(second, { ok: true, content: '', discoveredTools: [other, takenName] } satisfies ServiceToolOutcome);

      assert.deepEqual(results(driver), [
        [
          'Found 4 tools; you can call them from your next turn:',
          '- lookup: the tool_1 tool',
          '- lookup_2: the tool_2 tool',
          '- search_tools_2: the tool_3 tool',
          '- crm: the tool_4 tool',
        ].join('\n'),
        'Found 2 tools; you can call them from your next turn:\n- lookup_2: the tool_2 tool\n- lookup_2_2: the tool_5 tool',
      ]);
      const offered = driver.modelRequest().tools;
      assert.deepEqual(offered.map((tool) => tool.name), ['lookup', 'lookup_2', 'search_tools_2', 'crm', 'lookup_2_2', 'search_tools']);
      assert.deepEqual(driver.state.discoveredTools?.map((tool) => tool.metadata?.id), ['tool_2', 'tool_3', 'tool_4', 'tool_5']);
      assert.equal(driver.journal.filter((event) => event.type === 'tools_discovered').length, 2);

      // The next turn runs a found tool as an assigned one, and holds the one that requires approval.
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'c1', name: 'lookup_2', arguments: '{}' }, { id: 'c2', name: 'crm', arguments: '{}' }] });
      const run = driver.running.get(driver.callId('c1'))!;
      assert.equal(run.name, 'tool.call');
      assert.equal((run.input as { tool: { id: string } }).tool.id, 'tool_2');
      assert.equal(driver.state.status, 'OBJECTIVE_STATUS_AWAITING_APPROVAL');
      assert.ok(driver.journal.some((event) => event.type === 'recorded' && event.record.type === 'TOOL_APPROVAL_REQUESTED' && (event.record.data.toolApprovalRequested as { toolCallId: string }).toolCallId === driver.callId('c2')));
      assert.equal(driver.running.has(driver.callId('c2')), false);
    });

    it('adds nothing for a failed search or one that found nothing, and tells the model', async () => {
      const driver = new ObjectiveDriver();
      await driver.start({ tools: [], discovery: DISCOVERY });
      const [empty, failed] = await searchTurn(driver, ['nothing', 'broken']);
      await driver.succeed(empty, { ok: true, content: '', discoveredTools: [] } satisfies ServiceToolOutcome);
      await driver.succeed(failed, { ok: false, content: 'search_tools cannot search: rerankThreshold: must be a number of at least 0', errorType: 'INVALID_ARGUMENTS' } satisfies ServiceToolOutcome);
      assert.deepEqual(results(driver), ['No tools match. Try other words.']);
      assert.equal(driver.state.discoveredTools, undefined);
      assert.deepEqual(driver.modelRequest().tools.map((tool) => tool.name), ['search_tools']);
    });
  });
});
