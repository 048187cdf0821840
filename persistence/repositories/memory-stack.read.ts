// Memory stack reads (MemoryStore.stacks), each ONE statement: what an
// objective's creation needs (its memoryLayerIds checked, the skills
// manifest's entries and their count), and a key resolved top-down with the
// winning layer's lastUsedAt moved in the same round trip. `load_skill` runs
// the latter on every call, so it is a raw prepared read on the pool.
import type { EntityManager } from 'typeorm';
import type { MemoryEntryRecord, MemoryLayerRecord } from '../../src/memory/records';
import { MemoryLayerType } from '../../src/memory/records';
import type { SkillSummary } from '../../src/memory/skills-manifest';
import type { MarkUsedOptions, MemoryStore, StackRead, StackReadRequest } from '../../src/ports/memory-store';
import { MemoryEntryEntity } from '../entities/memory-entry.entity';
import { MemoryLayerEntity } from '../entities/memory-layer.entity';
import { entityColumns, readRows, readStatement, tableOf, type EntityColumns, type ReadStatement } from './record-table';

interface Statements {
  read: ReadStatement;
  resolveKey: ReadStatement;
  layer: EntityColumns<MemoryLayerRecord>;
  entry: EntityColumns<MemoryEntryRecord>;
}

function buildStatements(manager: EntityManager): Statements {
  const layers = tableOf(manager, MemoryLayerEntity as never);
  const entries = tableOf(manager, MemoryEntryEntity as never);
  const layer = entityColumns(manager, MemoryLayerEntity, 'l');
  const entry = entityColumns(manager, MemoryEntryEntity, 'e');
  // The stack as (layer_id, ordinality): a higher ordinality is nearer the top.
  // Keys compare and sort bytewise (COLLATE "C"): keys are ASCII and case-sensitive (spec 2.12).
  // The manifest's first `limit` keys are among each layer's first `limit`
  // keys (a key has fewer smaller keys in one layer than in the stack), so
  // only those are sorted and only theirs are read from the heap; the count
  // of distinct keys is needed only when the listing is full.
  const read = readStatement(`
    WITH stack AS (
      SELECT s.layer_id, s.ordinality FROM unnest($1::text[]) WITH ORDINALITY AS s(layer_id, ordinality)
      JOIN ${layers} l ON l.id = s.layer_id
      WHERE l.type = '${MemoryLayerType.SKILLS}' AND l.workspace_id = $2 AND NOT l.system_managed),
    listed AS (
      SELECT f.key FROM stack s
      CROSS JOIN LATERAL (SELECT e.key FROM ${entries} e WHERE e.memory_layer_id = s.layer_id ORDER BY e.key COLLATE "C" LIMIT $4) f
      GROUP BY f.key ORDER BY f.key COLLATE "C" LIMIT $4),
    winners AS (
      SELECT DISTINCT ON (k.key) k.key, e.title, e.description
      FROM listed k CROSS JOIN stack s JOIN ${entries} e ON e.memory_layer_id = s.layer_id AND e.key = k.key
      ORDER BY k.key, s.ordinality DESC)
    SELECT
      (SELECT json_agg(${layer.json}) FROM ${layers} l WHERE l.id = ANY($3::text[])) AS checked,
      CASE WHEN (SELECT count(*) FROM listed) < $4 THEN (SELECT count(*) FROM listed)
        ELSE (SELECT count(*) FROM (SELECT DISTINCT e.key FROM stack s JOIN ${entries} e ON e.memory_layer_id = s.layer_id) d) END AS skill_count,
      (SELECT json_agg(json_build_array(w.key, w.title, w.description) ORDER BY w.key COLLATE "C") FROM winners w) AS skills`);
  // The UPDATE runs once whether or not the SELECT reads it (a data-modifying
  // WITH always runs to completion). It skips a layer marked within the slack,
  // so a hot layer is written once per interval, not on every read; with
  // `last_used_at < now() - slack` the value only ever moves forward.
  const resolveKey = readStatement(`
    WITH hit AS (
      SELECT ${entry.json} AS entry, e.memory_layer_id
      FROM unnest($1::text[]) WITH ORDINALITY AS s(layer_id, ordinality)
      JOIN ${entries} e ON e.memory_layer_id = s.layer_id AND e.key = $2
      ORDER BY s.ordinality DESC LIMIT 1),
    used AS (
      UPDATE ${layers} SET last_used_at = now()
      WHERE id = (SELECT memory_layer_id FROM hit)
        AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $3::double precision))
      RETURNING id)
    SELECT entry FROM hit`);
  return { read, resolveKey, layer, entry };
}

/** MemoryStore.stacks over `manager` (raw reads on the pool outside a transaction). */
export function memoryStacksOn(manager: EntityManager): MemoryStore['stacks'] {
  // Built at the first call: a store is made for every transaction, most of which never read a stack.
  let statements: Statements | undefined;
  const built = () => (statements ??= buildStatements(manager));
  return {
    async read(request: StackReadRequest): Promise<StackRead> {
      const { read, layer } = built();
      const [row] = await readRows(manager, read, [request.layerIds, request.workspaceId, request.checkIds, request.skillsLimit]);
      const skills = ((row?.skills as Array<[string, string | null, string | null]> | null) ?? [])
        .map(([key, title, description]): SkillSummary => ({ key, title, description }));
      return {
        checked: ((row?.checked as unknown[] | null) ?? []).flatMap((value) => layer.decode(value) ?? []),
        skillCount: Number(row?.skill_count ?? 0),
        skills,
      };
    },
    async resolveKey(layerIds: readonly string[], key: string, markUsed: MarkUsedOptions): Promise<MemoryEntryRecord | null> {
      if (!layerIds.length) return null;
      const { resolveKey, entry } = built();
      const [row] = await readRows(manager, resolveKey, [layerIds, key, markUsed.slackMs / 1000]);
      return row ? entry.decode(row.entry) : null;
    },
  };
}
