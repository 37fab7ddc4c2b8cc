/** Memories of a group: /memories. The group is the `group` query parameter of every route. */
import { z } from 'zod';
import { routeOf } from '#functions/routes';
import { Timestamp } from './common';
import { defineOperation } from './operation';

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

export const listMemoriesOperation = defineOperation({
  route: routeOf('GET /memories'),
  tag: 'Memories',
  summary: "List a memory group's memories, newest first",
  description: 'Active and replaced memories alike. A group with no memories gives an empty list. Pass `next_cursor` as `after` for the next page.',
  input: { query: ListMemoriesQuery },
  responses: { 200: { description: 'A page of memories.', body: ListMemoriesResponse } },
  errors: [],
});

export const deleteMemoryOperation = defineOperation({
  route: routeOf('DELETE /memories/{id}'),
  tag: 'Memories',
  summary: 'Delete one memory of a group, for good',
  input: { params: MemoryIdParams, query: MemoryGroupQuery },
  responses: { 204: { description: 'Deleted.' } },
  errors: [404],
});

export const deleteMemoriesOperation = defineOperation({
  route: routeOf('DELETE /memories'),
  tag: 'Memories',
  summary: 'Delete every memory of a group',
  description: 'Repeating it is safe. Agents bound to the group can remember again afterwards.',
  input: { query: MemoryGroupQuery },
  responses: { 204: { description: 'Deleted (or there was nothing to delete).' } },
  errors: [],
});
