/** GET /memories: a group's memories, newest first, active and replaced, by signed cursor. */
import { listMemoriesOperation } from '#contracts/memories';
import { readMemories } from '#core/memories';
import { memoryStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listMemoriesOperation, async ({ principal, query }) => ({
  status: 200,
  body: await readMemories(memoryStore(principal.organizationId), query.group, query.after, query.limit),
}));
