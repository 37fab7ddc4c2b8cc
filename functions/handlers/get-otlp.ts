/** GET /integrations/otlp: the export settings as stored, or 404. */
import { getOtlpOperation } from '#contracts/outbound';
import { readOtlpSettings } from '#core/otlp-settings';
import { otlpSettingsStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getOtlpOperation, async ({ principal }) => ({
  status: 200,
  body: await readOtlpSettings(otlpSettingsStore(principal.organizationId)),
}));
