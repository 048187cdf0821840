// The memory side of the service tools (issue 25 items 1-3): `load_skill`
// over the stack's SKILLS layers, `memory_read` over the episodic layer and
// then the whole stack, `memory_write` into the episodic layer (stored by the
// EpisodicMemoryPort). Every key is checked by the rules of spec 2.12 first.
// A key resolves top-down (spec 2.11) in one statement
// that also marks the winning layer used. Bad input is an `ok: false` outcome
// the model reads, never a throw; a database failure throws (the effect
// fails and the objective records a TOOL_ERROR).
import type { MemoryStore } from '../ports/memory-store';
import type { MemoryTools, ServiceToolContext, ServiceToolOutcome } from '../ports/service-tools';
import { ToolErrorType } from '../tools/tool-call-outcome';
import type { EpisodicMemoryPort } from './episodic-memory';
import { MEMORY_CONTENT_MAX_BYTES } from './memory-entry.service';
import { memoryKeyProblem } from './memory-key';
import type { MemoryEntryRecord } from './records';

/**
 * A layer's lastUsedAt is written at most once per this interval: a skill
 * loaded by many objectives at once would otherwise write the same row on
 * every call (a lock queue and a dead tuple each time).
 */
export const LAST_USED_AT_SLACK_MS = 5_000;

function found(key: string, entry: MemoryEntryRecord): ServiceToolOutcome {
  return { ok: true, content: entry.content, memoryRead: { key, memoryLayerId: entry.memoryLayerId, memoryEntryId: entry.id } };
}

function notFound(content: string): ServiceToolOutcome {
  return { ok: false, content, errorType: ToolErrorType.NOT_FOUND };
}

function invalid(content: string): ServiceToolOutcome {
  return { ok: false, content, errorType: ToolErrorType.INVALID_ARGUMENTS };
}

export class MemoryToolsService implements MemoryTools {
  constructor(
    private readonly store: MemoryStore,
    private readonly episodic: EpisodicMemoryPort,
  ) {}

  /** The content of the topmost SKILLS layer's entry for `key` (a MEMORY_READ), or a not-found result. */
  async loadSkill(context: ServiceToolContext, key: string): Promise<ServiceToolOutcome> {
    const problem = memoryKeyProblem(key);
    if (problem) return invalid(`key: ${problem}`);
    const entry = await this.resolve(context.memory?.skillsLayerIds ?? [], key);
    if (entry) return found(key, entry);
    return notFound(`no skill with key ${JSON.stringify(key)} (keys are case-sensitive; the skills manifest in the system prompt lists them)`);
  }

  /** The episodic layer's entry for `key`, else the stack's topmost (any layer type), else a not-found result. */
  async read(context: ServiceToolContext, key: string): Promise<ServiceToolOutcome> {
    // No stored key breaks the rules of spec 2.12, and a NUL would only reach the database as an error.
    const problem = memoryKeyProblem(key);
    if (problem) return invalid(`key: ${problem}`);
    if (context.memory?.episodic) {
      const episodic = await this.episodic.read(context, key);
      if (episodic) return found(key, episodic);
    }
    const entry = await this.resolve(context.memory?.layerIds ?? [], key);
    if (entry) return found(key, entry);
    return notFound(`nothing is stored under the key ${JSON.stringify(key)} (keys are case-sensitive)`);
  }

  /** Checks the key (spec 2.12) and the size (1 MiB), then stores through the episodic port; the last write wins. */
  async write(context: ServiceToolContext, key: string, content: string): Promise<ServiceToolOutcome> {
    if (!context.memory?.episodic) return { ok: false, content: 'this objective has no episodic memory (it needs an episodicKey and a variation with enableEpisodicMemory)' };
    const problem = memoryKeyProblem(key);
    if (problem) return invalid(`key: ${problem}`);
    const size = Buffer.byteLength(content);
    if (size > MEMORY_CONTENT_MAX_BYTES) return invalid(`content: must be at most ${MEMORY_CONTENT_MAX_BYTES} bytes of UTF-8 (got ${size})`);
    return this.episodic.write(context, key, content);
  }

  private resolve(layerIds: readonly string[], key: string): Promise<MemoryEntryRecord | null> {
    return this.store.stacks.resolveKey(layerIds, key, { slackMs: LAST_USED_AT_SLACK_MS });
  }
}
