/** GET /models: the deployment's model catalogue. */
import { config } from '#core/config';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('GET /models'), {}, async () => ({
  status: 200,
  body: { models: config.modelCatalogue },
}));
