/**
 * The tools an agent configuration asks for, opened for one slice of an attempt: each
 * configured kind (terminal, web search, MCP servers, memory) adds its tools and, when it
 * has something to tell the model up front, instructions for the system prompt.
 */
import type { AgentConfig } from '#contracts/agent';
import { mcpToolSet } from '#functions/agent/tools/mcp';
import { terminalTools } from '#functions/agent/tools/terminal';
import { webSearchToolSet } from '#functions/agent/tools/web-search';
import type { Redactor, Tool } from '#functions/agent/types';
import type { InvocationFacts } from '#data/invocations';
import type { Logger } from './log';
import { openMemoryTools } from './memory-tools';

export interface ToolboxContext {
  organizationId: string;
  invocation: InvocationFacts;
  /** Resolved secret values by name: only what the configuration references. */
  secrets: ReadonlyMap<string, string>;
  /** The run's redactor of those values: for what a tool stores or reports itself. */
  redactor: Redactor;
  signal: AbortSignal;
  log?: Logger;
  /** URLs of the invocation's terminal workspace snapshot, valid for the seconds asked. */
  workspaceSnapshotUrls?(seconds: number): Promise<{ get: string; put: string }>;
}

/** What one kind of tool contributes. */
export interface ToolSet {
  tools: Tool[];
  /**
   * Paragraphs for the system prompt of a new attempt: known already (an unreachable
   * server), or read only when an attempt starts (the group's active memories), since a
   * slice that resumes from a checkpoint has its system prompt.
   */
  instructions?: string[] | (() => Promise<string[]>);
  /** Releases connections; called once the slice ends, however it ends. */
  close?(): Promise<void>;
}

export interface Toolbox {
  tools: Tool[];
  /** Every set's instructions, for the system prompt of a new attempt. */
  instructions(): Promise<string[]>;
  close(): Promise<void>;
}

type ToolSetFactory = (agent: AgentConfig, context: ToolboxContext) => Promise<ToolSet | undefined>;

// One entry per kind of tool; each returns undefined when the configuration does not ask for it.
const factories: ToolSetFactory[] = [
  terminalTools,
  webSearchToolSet,
  mcpToolSet,
  openMemoryTools,
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
