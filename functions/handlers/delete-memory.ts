/** DELETE /memories/{id}: deletes one memory of the group for good. */
import { MemoryGroupQuery, MemoryIdParams } from '#contracts/memories';
import { forgetMemory } from '#core/memories';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('DELETE /memories/{id}'),
  { params: MemoryIdParams, query: MemoryGroupQuery },
  async ({ principal, params, query }) => {
    await forgetMemory(principal.organizationId, query.group, params.id);
    return { status: 204 };
  },
);
