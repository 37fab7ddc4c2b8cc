/**
 * The tools an agent configuration asks for, opened for one slice of an attempt: each
 * configured kind (terminal, web search, MCP servers, memory) adds its tools and, when it
 * has something to tell the model up front, instructions for the system prompt.
 */
import type { AgentConfig } from '#contracts/agent';
import { mcpToolSet } from '#functions/agent/tools/mcp';
import { memoryTools } from '#functions/agent/tools/memory';
import { terminalTools } from '#functions/agent/tools/terminal';
import type { ToolboxContext, ToolSet, ToolSetFactory } from '#functions/agent/tools/types';
import { webSearchToolSet } from '#functions/agent/tools/web-search';
import type { Tool } from '#functions/agent/types';

export interface Toolbox {
  tools: Tool[];
  /** Every set's instructions, for the system prompt of a new attempt. */
  instructions(): Promise<string[]>;
  close(): Promise<void>;
}

// One entry per kind of tool; each returns undefined when the configuration does not ask for it.
const factories: ToolSetFactory[] = [
  terminalTools,
  webSearchToolSet,
  mcpToolSet,
  memoryTools,
];

/** Opens every tool the configuration asks for; tool names are unique across kinds. */
export async function openToolbox(agent: AgentConfig, context: ToolboxContext): Promise<Toolbox> {
  const sets: ToolSet[] = [];
  try {
    for (const factory of factories) {
      const set = await factory(agent, context);
      if (set) sets.push(set);
    }
  } catch (error) {
    await Promise.allSettled(sets.map((set) => set.close?.()));
    throw error;
  }
  const tools = sets.flatMap((set) => set.tools);
  const duplicate = tools.find((tool, i) => tools.findIndex((other) => other.name === tool.name) !== i);
  if (duplicate) throw new Error(`two tools are named ${duplicate.name}`);
  return {
    tools,
    async instructions() {
      const parts = await Promise.all(sets.map((set) => (typeof set.instructions === 'function' ? set.instructions() : (set.instructions ?? []))));
      return parts.flat();
    },
    async close() {
      await Promise.allSettled(sets.map((set) => set.close?.()));
    },
  };
}
