/** PUT /integrations/otlp: where every finished invocation's trace is exported. */
import { putOtlpOperation } from '#contracts/outbound';
import { putOtlpSettings } from '#core/otlp-settings';
import { otlpSettingsStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(putOtlpOperation, async ({ principal, body }) => ({
  status: 200,
  body: await putOtlpSettings(otlpSettingsStore(principal.organizationId), body),
}));
