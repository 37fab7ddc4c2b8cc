/** DELETE /memories: deletes every memory of the group; repeating it is safe. */
import { deleteMemoriesOperation } from '#contracts/memories';
import { forgetMemories } from '#core/memories';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(deleteMemoriesOperation, async ({ principal, query }) => {
  await forgetMemories(principal.organizationId, query.group);
  return { status: 204 };
});
