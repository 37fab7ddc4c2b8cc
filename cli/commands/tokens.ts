/** API keys: list, show, create (optionally saved to the profile) and delete. */
import { saveProfile } from '../config';
import { fields, table } from '../render';
import { output, write, type Command } from './shared';

export const tokenCommands: Command[] = [
  {
    name: 'tokens list',
    summary: 'the organization\'s API keys (user sign-in only)',
    async run(context) {
      const { tokens } = await (await context.client()).tokens.list();
      output(context, { tokens }, () => table(tokens, [
        { header: 'id', value: (t) => t.id },
        { header: 'name', value: (t) => t.name, max: 40 },
        { header: 'prefix', value: (t) => t.key_prefix },
        { header: 'created', value: (t) => t.created_at },
        { header: 'last used', value: (t) => t.last_used_at },
      ]));
    },
  },
  {
    name: 'tokens show',
    args: '<id>',
    summary: 'one API key\'s record',
    positionals: [1, 1],
    async run(context) {
      const token = await (await context.client()).tokens.get(context.positionals[0]!);
      output(context, token, () => fields([['id', token.id], ['name', token.name], ['prefix', token.key_prefix], ['created', token.created_at], ['last used', token.last_used_at]]));
    },
  },
  {
    name: 'tokens create',
    args: '<name>',
    summary: 'mint an API key (shown only now)',
    positionals: [1, 1],
    options: { save: { type: 'boolean', help: 'also save the key as the profile\'s credential' } },
    async run(context) {
      const created = await (await context.client()).tokens.create({ name: context.positionals[0]! });
      if (context.values.save) {
        const settings = await context.settings();
        await saveProfile(settings.configFile, settings.profile, { url: settings.url, token: created.key });
      }
      output(context, created, () => `${created.key}\n`);
      if (!context.json) write(context.io.stderr, `API key ${created.id} ("${created.name}"): shown only once${context.values.save ? '; saved to the profile' : ''}`);
    },
  },
  {
    name: 'tokens delete',
    args: '<id>',
    summary: 'revoke an API key at once',
    positionals: [1, 1],
    async run(context) {
      const id = context.positionals[0]!;
      await (await context.client()).tokens.delete(id);
      output(context, { deleted: id }, () => `Revoked API key ${id}`);
    },
  },
];
