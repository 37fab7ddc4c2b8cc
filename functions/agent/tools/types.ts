/**
 * What every kind of tool is opened with and gives back. The tools declare here what they
 * need and know nothing of storage or of the service around them: `core/toolbox.ts` composes
 * them, and the RunSteps task wires the context (resolved secrets, the memory group's store,
 * the workspace snapshot's URLs).
 */
import type { AgentConfig } from '#contracts/agent';
import type { Logger } from '#kit/log';
import type { Redactor, Tool } from '../types';

/** A memory as the memory tool shows it. */
export interface GroupMemory {
  id: string;
  content: string;
}

/** Why a memory was not written: the memory it replaces was replaced already, or the group has no such memory. */
export type MemoryRefusal = { refused: 'replaced_inactive' | 'unknown'; id: string };

/** The memory group of the running agent, bound to its organization and to the invocation that writes. */
export interface MemoryGroupStore {
  /** The group's newest active memories, at most `limit`. */
  active(limit: number): Promise<GroupMemory[]>;
  /** Writes one memory written by the model (`replaces` turns that one `replaced`); its id, or why nothing was written. */
  write(content: string, replaces?: string): Promise<{ id: string } | MemoryRefusal>;
}

export interface ToolboxContext {
  organizationId: string;
  invocationKey: string;
  /** Resolved secret values by name: only what the configuration references. */
  secrets: ReadonlyMap<string, string>;
  /** The run's redactor of those values: for what a tool stores or reports itself. */
  redactor: Redactor;
  signal: AbortSignal;
  log?: Logger;
  /** The configuration's memory group, when it has `memory`. */
  memories?: MemoryGroupStore;
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

/** Opens one kind of tool for a configuration; undefined when the configuration does not ask for it. */
export type ToolSetFactory = (agent: AgentConfig, context: ToolboxContext) => Promise<ToolSet | undefined>;
