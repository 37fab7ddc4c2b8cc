/** The top-level commands around the credential and the service: login, logout, whoami, health, models. */
import { AgentSessions } from '../../client/index';
import { saveProfile } from '../config';
import { table } from '../render';
import { output, stringOption, type Command } from './shared';

export const accountCommands: Command[] = [
  {
    name: 'login',
    args: '[email]',
    summary: 'sign in to the local service (POST /local/sign-in) and save the token in the profile',
    positionals: [0, 1],
    options: { 'api-key': { type: 'string', value: 'KEY', help: 'save this credential (an API key, or a token from elsewhere) instead of signing in' } },
    async run(context) {
      const settings = await context.settings({ creating: true });
      const email = context.positionals[0] ?? 'dev@localhost';
      const token = stringOption(context, 'api-key') ?? (await new AgentSessions({ baseUrl: settings.url }).localSignIn({ email })).token;
      // The first authenticated request also redeems a pending invite.
      const who = await new AgentSessions({ baseUrl: settings.url, token }).whoami();
      await saveProfile(settings.configFile, settings.profile, { url: settings.url, token });
      const as = who.kind === 'user' ? `${who.user.email} (${who.user.role})` : `API key ${who.api_key.name}`;
      output(context, { profile: settings.profile, url: settings.url, config_file: settings.configFile, whoami: who }, () =>
        `Signed in as ${as} in organization ${who.organization_id} at ${settings.url}\nSaved to profile "${settings.profile}" in ${settings.configFile}`,
      );
    },
  },
  {
    name: 'logout',
    summary: 'forget the profile\'s token',
    positionals: [0, 0],
    async run(context) {
      const settings = await context.settings();
      await saveProfile(settings.configFile, settings.profile, { token: undefined });
      output(context, { profile: settings.profile }, () => `Token removed from profile "${settings.profile}"`);
    },
  },
  {
    name: 'whoami',
    summary: 'what the credential authenticates',
    async run(context) {
      const who = await (await context.client()).whoami();
      output(context, who, () =>
        who.kind === 'user'
          ? `user ${who.user.email} (${who.user.role}, id ${who.user.id}) in organization ${who.organization_id}`
          : `API key "${who.api_key.name}" (id ${who.api_key.id}) in organization ${who.organization_id}`,
      );
    },
  },
  {
    name: 'health',
    summary: 'the service\'s health check (no credential)',
    async run(context) {
      const health = await (await context.client()).health();
      output(context, health, () => health.status);
    },
  },
  {
    name: 'models',
    summary: 'the models agents can run on',
    async run(context) {
      const { models } = await (await context.client()).models.list();
      output(context, { models }, () => table(models, [
        { header: 'provider', value: (m) => m.provider },
        { header: 'name', value: (m) => m.name },
      ]));
    },
  },
];
