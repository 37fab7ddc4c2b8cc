/**
 * Listing and deleting the memories of a group: what the /memories routes do. A group is
 * named per organization: another organization's group of the same name is another group.
 */
import { sha256 } from '#kit/ids';
import { sign, verify, type CursorScope } from './cursor';
import { InvalidInputError, NotFoundError } from './errors';
import type { Memory } from './model';

/** The memory groups of one organization. */
export interface MemoryStore extends CursorScope {
  /** Up to `limit` memories of a group after the one with id `afterId`, newest first, active and replaced, and whether more follow. */
  list(group: string, afterId: string | undefined, limit: number): Promise<{ memories: Memory[]; more: boolean }>;
  /** Deletes one memory of a group; false when the group holds no memory with that id. */
  delete(group: string, memoryId: string): Promise<boolean>;
  /** Deletes every memory of a group; an empty group is deleted just the same. */
  deleteGroup(group: string): Promise<void>;
}

/** A page of a group's memories, newest first; its cursors are bound to the group too (by digest, so they stay short). */
export async function readMemories(store: MemoryStore, group: string, after: string | undefined, limit: number) {
  const groupDigest = sha256(group);
  const position = after ? await verify(store, 'memories', after) : undefined;
  if (position && (position.group !== groupDigest || typeof position.id !== 'string')) throw new InvalidInputError('invalid pagination cursor');
  const { memories, more } = await store.list(group, position?.id as string | undefined, limit);
  const last = memories.at(-1);
  return {
    memories,
    ...(more && last ? { next_cursor: await sign(store, 'memories', { group: groupDigest, id: last.id }) } : {}),
  };
}

/** Deletes one memory of a group for good; NotFoundError when the group holds none with that id. */
export async function forgetMemory(store: MemoryStore, group: string, memoryId: string): Promise<void> {
  if (!(await store.delete(group, memoryId))) throw new NotFoundError(`memory ${memoryId} not found in this group`);
}

/** Deletes every memory of a group; safe to repeat. Its agents write new memories afterwards as before. */
export async function forgetMemories(store: MemoryStore, group: string): Promise<void> {
  await store.deleteGroup(group);
}
