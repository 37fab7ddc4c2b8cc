/**
 * Listing and deleting the memories of a group: what the /memories routes do between the
 * HTTP kit and the data layer. A group is named per organization: another organization's
 * group of the same name is another group.
 */
import { deleteMemory, deleteMemoryGroup, listMemories } from '#data/memories';
import { sign, verify, type CursorScope } from './cursor';
import { cursorKey } from '#data/cursor-key';

const cursorScope = (organizationId: string): CursorScope => ({ organizationId, cursorKey });
import { InvalidInputError, NotFoundError } from './errors';
import { sha256 } from '#kit/ids';

/** A page of a group's memories, newest first; its cursors are bound to the group too (by digest, so they stay short). */
export async function readMemories(organizationId: string, group: string, after: string | undefined, limit: number) {
  const groupDigest = sha256(group);
  const position = after ? await verify(cursorScope(organizationId), 'memories', after) : undefined;
  if (position && (position.group !== groupDigest || typeof position.id !== 'string')) throw new InvalidInputError('invalid pagination cursor');
  const { memories, more } = await listMemories(organizationId, group, position?.id as string | undefined, limit);
  const last = memories.at(-1);
  return {
    memories,
    ...(more && last ? { next_cursor: await sign(cursorScope(organizationId), 'memories', { group: groupDigest, id: last.id }) } : {}),
  };
}

/** Deletes one memory of a group for good; NotFoundError when the group holds none with that id. */
export async function forgetMemory(organizationId: string, group: string, memoryId: string): Promise<void> {
  if (!(await deleteMemory(organizationId, group, memoryId))) throw new NotFoundError(`memory ${memoryId} not found in this group`);
}

/** Deletes every memory of a group; safe to repeat. Its agents write new memories afterwards as before. */
export async function forgetMemories(organizationId: string, group: string): Promise<void> {
  await deleteMemoryGroup(organizationId, group);
}
