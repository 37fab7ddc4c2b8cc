/** DELETE /memories/{id}: deletes one memory of the group for good. */
import { deleteMemoryOperation } from '#contracts/memories';
import { forgetMemory } from '#core/memories';
import { memoryStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(deleteMemoryOperation, async ({ principal, params, query }) => {
  await forgetMemory(memoryStore(principal.organizationId), query.group, params.id);
  return { status: 204 };
});
