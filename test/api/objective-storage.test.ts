// Storage grows with the conversation, not its square (issue 24 item 7):
// through the API with the embedded runtime (snapshots every 10 entries, so
// a long objective meets several), builtin/scripted and the real tool server,
// an objective of 24 model turns, each with a 64 KiB tool result, writes a
// journal about the size of its conversation (each model call journaled its
// whole request before: ~12 times), and its snapshots stay within the
// conversation's size too (one every 10 entries of a growing state wrote
// ~3 times it).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, created, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { countSnapshotBytes, objectiveStorage, toolTurnsScript } from '../support/objective-storage';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import type { WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

const TURNS = 24;

describe('objective storage', function () {
  this.timeout(120_000);
  let api: TestApi;
  let tools: TestToolServer;
  let ws: WorkspaceFixture;

  before(async () => {
    api = await startTestApi({ runtime: { snapshotEvery: 10 }, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    ws = await workspaceFixture(api);
    tools = await startTestToolServer();
  });

  after(async () => {
    await api?.close();
    await tools?.close();
  });

  it('a long conversation writes a journal and snapshots within the size of the conversation', async () => {
    const agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You read pages.', modelConfig: { modelId: MODEL_ID } } });
    // /large answers 1 MiB: the result keeps its first 64 KiB.
    const page = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, { metadata: { name: 'page' }, spec: { description: 'Reads a page', http: { url: `${tools.url}/large`, method: 'POST' } } });
    await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: page.metadata.id });

    const snapshots = countSnapshotBytes();
    let counted: { bytes: number; count: number };
    let objectiveId: string;
    try {
      const response = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives`, { token: ws.token, body: { agentId, initialMessage: toolTurnsScript('page', TURNS) } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      objectiveId = response.body.metadata.id;
      let objective: any;
      for (let polls = 0; polls < 1200; polls++) {
        objective = (await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${objectiveId}`, { token: ws.token })).body;
        if (objective.info.status !== 'OBJECTIVE_STATUS_RUNNING' && objective.info.status !== 'OBJECTIVE_STATUS_PENDING') break;
        await sleep(50);
      }
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
      assert.equal(objective.info.toolCallCount, TURNS);
    } finally {
      counted = snapshots.stop();
    }

    const storage = await objectiveStorage(api.dataSource, [objectiveId], counted);
    const conversation = storage.conversationBytesPerObjective;
    assert.ok(conversation >= TURNS * 64 * 1024, JSON.stringify(storage));
    const { journal, snapshots: snapshotBytes } = storage.bytesWrittenPerObjective;
    assert.ok(journal <= 1.5 * conversation, `journal ${journal} bytes for a conversation of ${conversation}: ${JSON.stringify(storage)}`);
    assert.ok(storage.snapshotsPerObjective >= 1, `a snapshot was taken: ${JSON.stringify(storage)}`);
    assert.ok(snapshotBytes <= 1.2 * conversation, `snapshots ${snapshotBytes} bytes for a conversation of ${conversation}: ${JSON.stringify(storage)}`);
  });
});
