/**
 * The memory tool set of an agent with `memory`: the group's active memories as
 * instructions for the system prompt of a new attempt, and, with generation `agent`, the
 * `memory_write` tool. What the model writes is redacted of the run's secret values
 * before it is stored: tools receive the arguments exactly as the model wrote them.
 */
import { z } from 'zod';
import type { AgentConfig } from '#contracts/agent';
import { MemoryId } from '#contracts/memories';
import type { Tool } from '../types';
import type { GroupMemory, MemoryGroupStore, ToolboxContext, ToolSet } from './types';

/** The newest active memories the system prompt shows, at most this many... */
export const PROMPT_MEMORIES = 50;
/** ...and at most this many bytes (UTF-8) of memory content in all. */
export const PROMPT_MEMORY_BYTES = 16 * 1024;
/** The longest memory, in characters. */
export const MAX_MEMORY_CHARS = 4000;

/** The memories a system prompt shows: newest first, within the count read and the byte budget. */
export function withinBudget<T extends GroupMemory>(memories: T[]): T[] {
  const shown: T[] = [];
  let bytes = 0;
  for (const memory of memories) {
    bytes += Buffer.byteLength(memory.content, 'utf8');
    if (bytes > PROMPT_MEMORY_BYTES) break;
    shown.push(memory);
  }
  return shown;
}

/** The system prompt paragraph listing the memories (with their ids, so the model can replace one). */
function memoryInstructions(group: string, memories: GroupMemory[], canWrite: boolean): string | undefined {
  if (memories.length === 0 && !canWrite) return undefined;
  const lines = [`# Memories of the group "${group}"`];
  if (memories.length) {
    lines.push('What agents of this group remembered from earlier conversations, newest first, each after its [id]:');
    lines.push(...memories.map((memory) => `- [${memory.id}] ${memory.content}`));
  } else {
    lines.push('The group has no memories yet.');
  }
  if (canWrite) {
    lines.push(
      'Call memory_write with {"content": "..."} to remember a durable fact for later conversations (one self-contained fact per call), ' +
        'or with {"content": "...", "replaces": "<id>"} to correct or update a memory listed above. Never store credentials or secret values.',
    );
  }
  return lines.join('\n');
}

const WriteArguments = z.strictObject({
  content: z.string().trim().min(1, 'content must not be empty').max(MAX_MEMORY_CHARS, `content must be at most ${MAX_MEMORY_CHARS} characters`),
  replaces: MemoryId.optional(),
});

function memoryWriteTool(group: string, store: MemoryGroupStore, context: ToolboxContext): Tool {
  const { redactor } = context;
  return {
    name: 'memory_write',
    description:
      `Stores a memory in the group "${group}", shared with every agent of the group in later conversations. ` +
      'With replaces, the new memory supersedes the active memory with that id. Returns the new memory id.',
    parameters: {
      type: 'object',
      properties: {
        content: { type: 'string', description: `The fact to remember, self-contained, at most ${MAX_MEMORY_CHARS} characters.` },
        replaces: { type: 'string', description: 'The id of an active memory this one corrects or updates.' },
      },
      required: ['content'],
      additionalProperties: false,
    },
    async call(args) {
      const parsed = WriteArguments.safeParse(args);
      if (!parsed.success) throw new Error(`invalid memory_write arguments: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
      const { content, replaces } = parsed.data;
      const result = await store.write(redactor.redact(content), replaces);
      if ('refused' in result) {
        if (result.refused === 'replaced_inactive') throw new Error(`memory ${result.id} was already replaced; only an active memory can be replaced`);
        throw new Error(`the group has no memory ${result.id}; replaces must be the id of one of its active memories`);
      }
      return { id: result.id, status: 'active', ...(replaces !== undefined ? { replaced: replaces } : {}) };
    },
  };
}

/** The memory tool set, or undefined when the configuration has no `memory`. */
export async function memoryTools(agent: AgentConfig, context: ToolboxContext): Promise<ToolSet | undefined> {
  if (!agent.memory) return undefined;
  const store = context.memories;
  if (!store) throw new Error('the configuration has a memory group, but no memory store was given');
  const { group } = agent.memory;
  const canWrite = agent.memory.generation?.includes('agent') ?? false;
  return {
    tools: canWrite ? [memoryWriteTool(group, store, context)] : [],
    async instructions() {
      const memories = withinBudget(await store.active(PROMPT_MEMORIES));
      const instructions = memoryInstructions(group, memories, canWrite);
      return instructions ? [instructions] : [];
    },
  };
}
