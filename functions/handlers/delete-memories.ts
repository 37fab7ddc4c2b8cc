/** DELETE /memories: deletes every memory of the group; repeating it is safe. */
import { MemoryGroupQuery } from '#contracts/memories';
import { forgetMemories } from '#core/memories';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('DELETE /memories'),
  { query: MemoryGroupQuery },
  async ({ principal, query }) => {
    await forgetMemories(principal.organizationId, query.group);
    return { status: 204 };
  },
);
