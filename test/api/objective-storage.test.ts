// Storage grows with the conversation, not its square (issue 24 item 7):
// through the API with the embedded runtime (snapshots every 10 entries, so
// a long objective meets several), builtin/scripted and the real tool server,
// an objective of 24 model turns, each with a 64 KiB tool result, writes a
// journal about the size of its conversation (each model call journaled its
// whole request before: ~12 times), and its snapshots stay within the
// conversation's size too (one every 10 entries of a growing state wrote
// ~3 times it); and all it writes (journal, snapshots, outbox and event rows)
// stays within 3 times the conversation: an event's content is in its
// objective_events row, not in its outbox row as well. Events whose node died
// after their commit and before their publication are published from what
// the recovery read rebuilds from those rows, exactly as they were written.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApi, type TestApi } from '../support/api';
import { eventuallyValue } from '../support/eventually';
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

  /** An agent whose one tool, `page`, answers 64 KiB of JSON records (/large answers 1 MiB: the result keeps its first 64 KiB). */
  async function pageReader(): Promise<string> {
    const agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You read pages.', modelConfig: { modelId: MODEL_ID } } });
    const page = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, { metadata: { name: 'page' }, spec: { description: 'Reads a page', http: { url: `${tools.url}/large`, method: 'POST' } } });
    await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: page.metadata.id });
    return agentId;
  }

  /** Runs an objective of `turns` page reads to COMPLETED; answers its id. */
  async function readPages(agentId: string, turns: number): Promise<string> {
    const response = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives`, { token: ws.token, body: { agentId, initialMessage: toolTurnsScript('page', turns) } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const objectiveId = response.body.metadata.id;
    let objective: any;
    for (let polls = 0; polls < 1200; polls++) {
      objective = (await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${objectiveId}`, { token: ws.token })).body;
      if (objective.info.status !== 'OBJECTIVE_STATUS_RUNNING' && objective.info.status !== 'OBJECTIVE_STATUS_PENDING') break;
      await sleep(50);
    }
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.equal(objective.info.toolCallCount, turns);
    return objectiveId;
  }

  it('a long conversation writes a journal and snapshots within the size of the conversation, and everything within 3 times it', async () => {
    const agentId = await pageReader();
    const snapshots = countSnapshotBytes();
    let counted: { bytes: number; count: number };
    let objectiveId: string;
    try {
      objectiveId = await readPages(agentId, TURNS);
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
    const { total } = storage.bytesWrittenPerObjective;
    assert.ok(total <= 3 * conversation, `${total} bytes written (jsonb, before compression) for a conversation of ${conversation}: ${JSON.stringify(storage)}`);
  });

  it('publishes the events a node left unpublished (it died after their commit) with their whole content, rebuilt from the event rows', async () => {
    const objectiveId = await readPages(await pageReader(), 3);
    const eventIds = `SELECT id FROM objective_events WHERE objective_id = $1`;
    const messages = async (): Promise<Array<{ id: string; payload: any }>> =>
      (await api.dataSource.query(`SELECT message_id AS id, payload FROM embedded_stream_messages WHERE message_id IN (${eventIds}) ORDER BY seq`, [objectiveId]))
        .map((row: { id: string; payload: string }) => ({ id: row.id, payload: JSON.parse(row.payload) }));
    await eventuallyValue(async () => (await api.runtime!.unpublishedEventCount('objective', [objectiveId])) === 0, 'the events published');
    const published = await messages();
    const events = (await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${objectiveId}/events?limit=100`, { token: ws.token })).body.items;
    assert.equal(published.length, events.length);
    const results = published.filter((message) => message.payload.data.objectiveEvent.data.toolResult);
    assert.equal(results.length, 3);
    for (const result of results) assert.ok(result.payload.data.objectiveEvent.data.toolResult.content.length >= 64 * 1024, 'a published tool result carries its content');
    const [outbox] = await api.dataSource.query(`SELECT count(*)::int AS rows, count(payload)::int AS payloads FROM actor_outbox WHERE id IN (${eventIds})`, [objectiveId]);
    assert.deepEqual(outbox, { rows: events.length, payloads: 0 }, 'the outbox rows keep no copy of the content');

    // The tables as a node leaves them when it dies between a turn's commit and the publication of its events:
    // the outbox rows unpublished, the stream without the messages. The relay's next read of the outbox publishes them.
    await api.dataSource.transaction(async (manager) => {
      await manager.query(`DELETE FROM embedded_stream_messages WHERE message_id IN (${eventIds})`, [objectiveId]);
      await manager.query(`UPDATE actor_outbox SET published_at = NULL WHERE id IN (${eventIds})`, [objectiveId]);
    });
    await api.runtime!.flushOutbox();
    await eventuallyValue(async () => (await api.runtime!.unpublishedEventCount('objective', [objectiveId])) === 0, 'the events published again');
    assert.deepEqual(await messages(), published);
  });
});
