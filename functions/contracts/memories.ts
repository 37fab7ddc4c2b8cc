/** Memories of a group: /memories. The group is the `group` query parameter of every route. */
import { z } from 'zod';
import { Timestamp } from './common';

/** The `memory.group` value of the agents sharing the memories. */
export const MemoryGroup = z.string().min(1).max(256);

export const MemoryId = z.string().min(1).max(64);

/** A signed cursor from a previous page's `next_cursor`. */
const SignedCursor = z.string().min(1).max(2048);

const limit = z
  .string()
  .regex(/^\d{1,10}$/, 'limit must be a whole number')
  .transform(Number)
  .pipe(z.int().min(1).max(1000));

export const MemoryGroupQuery = z.object({ group: MemoryGroup });

export const ListMemoriesQuery = z.object({
  group: MemoryGroup,
  after: SignedCursor.optional(),
  limit: limit.default(100),
});

export const MemoryIdParams = z.object({ id: MemoryId });

export const Memory = z.object({
  id: MemoryId,
  content: z.string(),
  status: z.enum(['active', 'replaced']),
  created_at: Timestamp,
  source_session: z.string(),
  source_invocation: z.string(),
});

export const ListMemoriesResponse = z.object({ memories: z.array(Memory), next_cursor: z.string().optional() });
