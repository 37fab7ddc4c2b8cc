/** Integrations: the OTLP export of finished invocations (set, show, delete). */
import type { OtlpSettings } from '../../client/types';
import { UsageError } from '../errors';
import { fields } from '../render';
import { listOption, output, requiredOption, type Command, type Context } from './shared';

/** `--header NAME=VALUE`, repeated, as one record; undefined when none was given. */
function headersOption(context: Context): Record<string, string> | undefined {
  const given = listOption(context, 'header');
  if (given.length === 0) return undefined;
  const headers: Record<string, string> = {};
  for (const text of given) {
    const at = text.indexOf('=');
    const name = text.slice(0, at).trim();
    if (at < 0 || name === '') throw new UsageError(`--header must be NAME=VALUE, not "${text}"`);
    // Header names are case-insensitive: two spellings of one name would be one header.
    if (Object.keys(headers).some((known) => known.toLowerCase() === name.toLowerCase())) throw new UsageError(`--header ${name} is given twice`);
    headers[name] = text.slice(at + 1);
  }
  return headers;
}

/** The settings as `name: value` lines; header values are shown as stored (secret references, not secrets). */
export function otlpFields(settings: OtlpSettings): string {
  return fields([
    ['endpoint', settings.endpoint],
    ['payloads', settings.payloads ? 'on' : 'off'],
    ...Object.entries(settings.headers ?? {}).map(([name, value]): [string, string] => ['header', `${name}: ${value}`]),
  ]);
}

export const integrationCommands: Command[] = [
  {
    name: 'integrations otlp set',
    summary: 'export every finished invocation as an OTLP trace (replaces the settings)',
    options: {
      endpoint: { type: 'string', value: 'URL', help: 'an OTLP/HTTP traces URL, ending in /v1/traces' },
      header: { type: 'string', value: 'NAME=VALUE', multiple: true, help: 'a header sent with each export; the value may hold {{secret:NAME}}' },
      payloads: { type: 'boolean', help: 'also export each span\'s input and output (redacted, truncated)' },
    },
    async run(context) {
      const endpoint = requiredOption(context, 'endpoint');
      const headers = headersOption(context);
      const settings = await (await context.client()).integrations.otlp.set({ endpoint, ...(headers ? { headers } : {}), payloads: context.values.payloads === true });
      output(context, settings, () => `Exporting finished invocations:\n${otlpFields(settings)}`);
    },
  },
  {
    name: 'integrations otlp show',
    summary: 'the OTLP export\'s settings',
    async run(context) {
      const settings = await (await context.client()).integrations.otlp.get();
      output(context, settings, () => otlpFields(settings));
    },
  },
  {
    name: 'integrations otlp delete',
    summary: 'stop the OTLP export',
    async run(context) {
      await (await context.client()).integrations.otlp.delete();
      output(context, { deleted: 'otlp' }, () => 'Stopped the OTLP export');
    },
  },
];
