/** DELETE /memories: deletes every memory of the group; repeating it is safe. */
import { deleteMemoriesOperation } from '#contracts/memories';
import { forgetMemories } from '#core/memories';
import { memoryStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(deleteMemoriesOperation, async ({ principal, query }) => {
  await forgetMemories(memoryStore(principal.organizationId), query.group);
  return { status: 204 };
});
