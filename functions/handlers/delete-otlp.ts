/** DELETE /integrations/otlp: stops exporting traces. */
import { deleteOtlpOperation } from '#contracts/outbound';
import { deleteOtlpSettings } from '#core/otlp-settings';
import { otlpSettingsStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(deleteOtlpOperation, async ({ principal }) => {
  await deleteOtlpSettings(otlpSettingsStore(principal.organizationId));
  return { status: 204 };
});
