/** GET /models: the deployment's model catalogue. */
import { listModelsOperation } from '#contracts/identity';
import { config } from '#kit/config';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listModelsOperation, async () => ({
  status: 200,
  body: { models: config.modelCatalogue },
}));
