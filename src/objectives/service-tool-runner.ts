// The `service_tool.call` effect: reads a service tool call's arguments and
// hands it to the area that does the work (memory for `load_skill`,
// `memory_read` and `memory_write`, search for `search_tools`). Arguments the
// model got wrong come back as a TOOL_ERROR it can read and correct, never
// as a failed effect.
import {
  ServiceToolName, type MemoryTools, type ServiceToolCallInput, type ServiceToolOutcome, type ToolDiscovery,
} from '../ports/service-tools';
import { ToolErrorType } from '../tools/tool-call-outcome';

export interface ServiceToolRunnerDependencies {
  memory: MemoryTools;
  discovery: ToolDiscovery;
}

/** The tool's arguments as strings by name, or what is wrong with them. */
function stringArguments(raw: string, names: readonly string[]): { values: Record<string, string> } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw === '' ? '{}' : raw);
  } catch {
    return { problem: 'the arguments are not valid JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { problem: 'the arguments must be a JSON object' };
  const values: Record<string, string> = {};
  for (const name of names) {
    const value = (parsed as Record<string, unknown>)[name];
    if (typeof value !== 'string') return { problem: `${name}: is required and must be a string` };
    values[name] = value;
  }
  return { values };
}

function invalidArguments(toolName: string, problem: string): ServiceToolOutcome {
  return { ok: false, content: `invalid arguments for ${toolName}: ${problem}`, errorType: ToolErrorType.INVALID_ARGUMENTS };
}

export class ServiceToolRunner {
  constructor(private readonly dependencies: ServiceToolRunnerDependencies) {}

  async run(input: ServiceToolCallInput): Promise<ServiceToolOutcome> {
    const { memory, discovery } = this.dependencies;
    const { context } = input;
    switch (input.name) {
      case ServiceToolName.LOAD_SKILL: {
        const parsed = stringArguments(input.arguments, ['key']);
        return 'problem' in parsed ? invalidArguments(input.name, parsed.problem) : memory.loadSkill(context, parsed.values.key);
      }
      case ServiceToolName.MEMORY_READ: {
        const parsed = stringArguments(input.arguments, ['key']);
        return 'problem' in parsed ? invalidArguments(input.name, parsed.problem) : memory.read(context, parsed.values.key);
      }
      case ServiceToolName.MEMORY_WRITE: {
        const parsed = stringArguments(input.arguments, ['key', 'content']);
        return 'problem' in parsed ? invalidArguments(input.name, parsed.problem) : memory.write(context, parsed.values.key, parsed.values.content);
      }
      case ServiceToolName.SEARCH_TOOLS: {
        const parsed = stringArguments(input.arguments, ['query']);
        return 'problem' in parsed ? invalidArguments(input.name, parsed.problem) : discovery.searchTools(context, parsed.values.query);
      }
      default:
        return { ok: false, content: `unknown service tool: ${String(input.name)}`, errorType: ToolErrorType.INVALID_ARGUMENTS };
    }
  }
}
