/** Invites: create one. */
import { UsageError } from '../errors';
import { output, stringOption, type Command } from './shared';

export const inviteCommands: Command[] = [
  {
    name: 'invites create',
    args: '<email>',
    summary: 'invite someone (admins only); without --organization they found a new one',
    positionals: [1, 1],
    options: {
      role: { type: 'string', value: 'ROLE', help: 'admin or member' },
      organization: { type: 'string', value: 'ID', help: 'the organization to join (default: found a new one)' },
      key: { type: 'string', value: 'KEY', help: 'an Idempotency-Key, to make re-sending safe across runs' },
    },
    async run(context) {
      const role = stringOption(context, 'role');
      if (role !== undefined && role !== 'admin' && role !== 'member') throw new UsageError(`--role must be admin or member, not "${role}"`);
      const invite = await (await context.client()).invites.create({
        email: context.positionals[0]!,
        ...(role ? { role } : {}),
        ...(stringOption(context, 'organization') ? { organization_id: stringOption(context, 'organization') } : {}),
        ...(stringOption(context, 'key') ? { idempotency_key: stringOption(context, 'key') } : {}),
      });
      output(context, invite, () => `Invited ${invite.email} as ${invite.role} of ${invite.organization_id} (invite ${invite.id}); it is redeemed at their first sign-in`);
    },
  },
];
