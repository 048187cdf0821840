import assert from 'node:assert/strict';
import { MemoryToolsService, LAST_USED_AT_SLACK_MS } from '../../src/memory/memory-tools.service';
import type { EpisodicMemoryPort } from '../../src/memory/episodic-memory';
import type { MemoryEntryRecord } from '../../src/memory/records';
import type { MemoryStore } from '../../src/ports/memory-store';
import type { ServiceToolContext, ServiceToolOutcome } from '../../src/ports/service-tools';

function entry(memoryLayerId: string, key: string, content: string): MemoryEntryRecord {
  const now = new Date();
  return {
    id: `mement_${memoryLayerId}_${key}`, accountId: 'acct', workspaceId: 'ws', memoryLayerId, key, content, title: null, description: null,
    name: key, externalId: null, labels: {}, profileId: null, createdAt: now, updatedAt: now,
  } as MemoryEntryRecord;
}

/** A store resolving over fixed entries, recording the stacks it was asked about. */
function fakeStore(entries: MemoryEntryRecord[]) {
  const asked: Array<{ layerIds: readonly string[]; key: string; slackMs: number }> = [];
  const store = {
    stacks: {
      read: () => Promise.reject(new Error('not used')),
      async resolveKey(layerIds: readonly string[], key: string, markUsed: { slackMs: number }) {
        asked.push({ layerIds, key, slackMs: markUsed.slackMs });
        for (const layerId of [...layerIds].reverse()) {
          const hit = entries.find((candidate) => candidate.memoryLayerId === layerId && candidate.key === key);
          if (hit) return hit;
        }
        return null;
      },
    },
  } as unknown as MemoryStore;
  return { store, asked };
}

function fakeEpisodic(stored: MemoryEntryRecord[] = []) {
  const writes: Array<{ key: string; content: string }> = [];
  const port: EpisodicMemoryPort = {
    ensureLayer: () => Promise.reject(new Error('not used')),
    read: async (_context, key) => stored.find((candidate) => candidate.key === key) ?? null,
    write: async (_context, key, content): Promise<ServiceToolOutcome> => {
      writes.push({ key, content });
      return { ok: true, content: 'saved' };
    },
  };
  return { port, writes };
}

function context(memory: Partial<NonNullable<ServiceToolContext['memory']>> | null): ServiceToolContext {
  return {
    accountId: 'acct', workspaceId: 'ws', objectiveId: 'obj', discovery: null,
    memory: memory && { layerIds: [], skillsLayerIds: [], episodic: null, ...memory },
  };
}

describe('MemoryToolsService', () => {
  const entries = [entry('skills-low', 'refunds', 'low'), entry('skills-high', 'refunds', 'high'), entry('notes', 'refunds', 'notes'), entry('notes', 'todo', 'notes todo')];

  describe('loadSkill(context, key)', () => {
    it('resolves over the SKILLS layers only, top down, naming the winning layer and entry', async () => {
      const { store, asked } = fakeStore(entries);
      const sut = new MemoryToolsService(store, fakeEpisodic().port);
      const outcome = await sut.loadSkill(context({ layerIds: ['skills-low', 'skills-high', 'notes'], skillsLayerIds: ['skills-low', 'skills-high'] }), 'refunds');
      assert.deepEqual(outcome, { ok: true, content: 'high', memoryRead: { key: 'refunds', memoryLayerId: 'skills-high', memoryEntryId: 'mement_skills-high_refunds' } });
      assert.deepEqual(asked, [{ layerIds: ['skills-low', 'skills-high'], key: 'refunds', slackMs: LAST_USED_AT_SLACK_MS }]);
    });

    it('answers a missing key with a NOT_FOUND result, not a throw', async () => {
      const sut = new MemoryToolsService(fakeStore(entries).store, fakeEpisodic().port);
      const outcome = await sut.loadSkill(context({ skillsLayerIds: ['skills-low'] }), 'todo');
      assert.deepEqual(outcome, { ok: false, content: 'no skill with key "todo" (keys are case-sensitive; the skills manifest in the system prompt lists them)', errorType: 'NOT_FOUND' });
    });
  });

  describe('read(context, key)', () => {
    it('takes the episodic entry first when the objective has episodic memory', async () => {
      const sut = new MemoryToolsService(fakeStore(entries).store, fakeEpisodic([entry('episodic-1', 'refunds', 'remembered')]).port);
      const outcome = await sut.read(context({ layerIds: ['notes'], episodic: { key: 'e', ttlSeconds: null } }), 'refunds');
      assert.deepEqual(outcome.memoryRead, { key: 'refunds', memoryLayerId: 'episodic-1', memoryEntryId: 'mement_episodic-1_refunds' });
      assert.equal(outcome.content, 'remembered');
    });

    it('then resolves over the whole stack, any layer type, top down', async () => {
      const sut = new MemoryToolsService(fakeStore(entries).store, fakeEpisodic().port);
      const outcome = await sut.read(context({ layerIds: ['skills-high', 'notes'], episodic: { key: 'e', ttlSeconds: null } }), 'refunds');
      assert.equal(outcome.memoryRead?.memoryLayerId, 'notes');
    });

    it('answers a key found nowhere with a NOT_FOUND result', async () => {
      const sut = new MemoryToolsService(fakeStore(entries).store, fakeEpisodic().port);
      assert.deepEqual(await sut.read(context(null), 'refunds'), { ok: false, content: 'nothing is stored under the key "refunds" (keys are case-sensitive)', errorType: 'NOT_FOUND' });
    });
  });

  it('answers a key no entry can have (a NUL, a reserved prefix) with INVALID_ARGUMENTS before any read', async () => {
    const { store, asked } = fakeStore(entries);
    let episodicReads = 0;
    const episodic: EpisodicMemoryPort = { ...fakeEpisodic().port, read: async () => { episodicReads += 1; return null; } };
    const sut = new MemoryToolsService(store, episodic);
    const memory = context({ layerIds: ['notes'], skillsLayerIds: ['skills-low'], episodic: { key: 'e', ttlSeconds: null } });
    assert.deepEqual(await sut.loadSkill(memory, 'a\u0000b'), { ok: false, content: 'key: contains "\\u0000"; only ASCII letters, digits and ! - _ . * \' ( ) / are allowed', errorType: 'INVALID_ARGUMENTS' });
    assert.equal((await sut.read(memory, 'system/x')).errorType, 'INVALID_ARGUMENTS');
    assert.deepEqual([asked.length, episodicReads], [0, 0], 'nothing reached the database');
  });

  describe('write(context, key, content)', () => {
    const episodic = { episodic: { key: 'e', ttlSeconds: 60 } };

    it('delegates a valid write to episodic memory', async () => {
      const { port, writes } = fakeEpisodic();
      const sut = new MemoryToolsService(fakeStore([]).store, port);
      assert.deepEqual(await sut.write(context(episodic), 'notes/today', 'x'), { ok: true, content: 'saved' });
      assert.deepEqual(writes, [{ key: 'notes/today', content: 'x' }]);
    });

    it('refuses a key breaking the rules of spec 2.12, and content over 1 MiB, writing nothing', async () => {
      const { port, writes } = fakeEpisodic();
      const sut = new MemoryToolsService(fakeStore([]).store, port);
      assert.deepEqual(await sut.write(context(episodic), 'a//b', 'x'), { ok: false, content: "key: must not contain '//'", errorType: 'INVALID_ARGUMENTS' });
      const big = await sut.write(context(episodic), 'big', 'x'.repeat(1024 * 1024 + 1));
      assert.deepEqual(big, { ok: false, content: 'content: must be at most 1048576 bytes of UTF-8 (got 1048577)', errorType: 'INVALID_ARGUMENTS' });
      assert.deepEqual(writes, []);
    });

    it('refuses without episodic settings', async () => {
      const { port, writes } = fakeEpisodic();
      const sut = new MemoryToolsService(fakeStore([]).store, port);
      const outcome = await sut.write(context({ layerIds: ['notes'] }), 'k', 'x');
      assert.equal(outcome.ok, false);
      assert.match(outcome.content, /no episodic memory/);
      assert.deepEqual(writes, []);
    });
  });
});
