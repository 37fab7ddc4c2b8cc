/** Secrets: list, show, create, update and delete; values from a flag or stdin. */
import { table } from '../render';
import { output, readStdin, stringOption, type Command } from './shared';

export const secretCommands: Command[] = [
  {
    name: 'secrets list',
    summary: 'secrets, masked',
    async run(context) {
      const { secrets } = await (await context.client()).secrets.list();
      output(context, { secrets }, () => table(secrets, [{ header: 'name', value: (s) => s.name }, { header: 'value', value: (s) => s.masked_value }]));
    },
  },
  {
    name: 'secrets show',
    args: '<name>',
    summary: 'one secret, masked',
    positionals: [1, 1],
    async run(context) {
      const secret = await (await context.client()).secrets.get(context.positionals[0]!);
      output(context, secret, () => `${secret.name}  ${secret.masked_value}`);
    },
  },
  {
    name: 'secrets create',
    args: '<name>',
    summary: 'store a secret (the value from --value, or stdin so it stays out of shell history)',
    positionals: [1, 1],
    options: { value: { type: 'string', value: 'VALUE', help: 'the value (default: read stdin)' } },
    async run(context) {
      const value = stringOption(context, 'value') ?? (await readStdin(context.io, 'value'));
      const secret = await (await context.client()).secrets.create({ name: context.positionals[0]!, value });
      output(context, secret, () => `Stored ${secret.name} (${secret.masked_value}); agents reference it as {{secret:${secret.name}}}`);
    },
  },
  {
    name: 'secrets update',
    args: '<name>',
    summary: 'rotate a secret\'s value (from --value, or stdin)',
    positionals: [1, 1],
    options: { value: { type: 'string', value: 'VALUE', help: 'the new value (default: read stdin)' } },
    async run(context) {
      const value = stringOption(context, 'value') ?? (await readStdin(context.io, 'value'));
      const secret = await (await context.client()).secrets.update(context.positionals[0]!, { value });
      output(context, secret, () => `Rotated ${secret.name} (${secret.masked_value})`);
    },
  },
  {
    name: 'secrets delete',
    args: '<name>',
    summary: 'delete a secret',
    positionals: [1, 1],
    async run(context) {
      const name = context.positionals[0]!;
      await (await context.client()).secrets.delete(name);
      output(context, { deleted: name }, () => `Deleted secret ${name}`);
    },
  },
];
