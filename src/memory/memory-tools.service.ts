// The memory side of the service tools (issue 25 items 1-3): `load_skill`
// over the stack's skills layers, `memory_read` over the episodic layer and
// the stack, `memory_write` into the episodic layer. SKELETON: filled in by
// the memory work of issue 25.
import type { MemoryStore } from '../ports/memory-store';
import type { EpisodicMemoryPort } from './episodic-memory';
import type { MemoryTools, ServiceToolContext, ServiceToolOutcome } from '../ports/service-tools';

const NOT_YET: ServiceToolOutcome = { ok: false, content: 'memory tools are not available yet' };

export class MemoryToolsService implements MemoryTools {
  constructor(
    private readonly store: MemoryStore,
    private readonly episodic: EpisodicMemoryPort,
  ) {}

  async loadSkill(_context: ServiceToolContext, _key: string): Promise<ServiceToolOutcome> {
    void this.store;
    void this.episodic;
    return NOT_YET;
  }

  async read(_context: ServiceToolContext, _key: string): Promise<ServiceToolOutcome> {
    return NOT_YET;
  }

  async write(_context: ServiceToolContext, _key: string, _content: string): Promise<ServiceToolOutcome> {
    return NOT_YET;
  }
}
