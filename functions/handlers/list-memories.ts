/** GET /memories: a group's memories, newest first, active and replaced, by signed cursor. */
import { ListMemoriesQuery } from '#contracts/memories';
import { readMemories } from '#core/memories';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('GET /memories'),
  { query: ListMemoriesQuery },
  async ({ principal, query }) => ({
    status: 200,
    body: await readMemories(principal.organizationId, query.group, query.after, query.limit),
  }),
);
