/** Sessions: list, show (with messages), audit and delete. */
import { auditTable, table, transcript } from '../render';
import { intOption, output, PAGE_OPTIONS, showList, stringOption, type Command } from './shared';

/** The CLI default page size of session messages (the spec's). */
const MESSAGES_LIMIT = 100;

export const sessionCommands: Command[] = [
  {
    name: 'sessions list',
    summary: 'sessions, most recently updated first',
    options: PAGE_OPTIONS,
    async run(context) {
      const list = (await context.client()).sessions.list({ limit: intOption(context, 'limit', 1, 1000), after: stringOption(context, 'after') });
      await showList(context, list, 'sessions', (sessions) =>
        table(sessions, [
          { header: 'id', value: (s) => s.id, max: 40 },
          { header: 'state', value: (s) => s.state },
          { header: 'invocations', value: (s) => s.invocation_count },
          { header: 'agent', value: (s) => s.agent_name, max: 30 },
          { header: 'updated', value: (s) => s.updated_at },
        ]),
      );
    },
  },
  {
    name: 'sessions show',
    args: '<session-id>',
    summary: `a session and its messages (${MESSAGES_LIMIT} per page unless --limit)`,
    positionals: [1, 1],
    options: PAGE_OPTIONS,
    async run(context) {
      const list = (await context.client()).sessions.get(context.positionals[0]!, {
        limit: intOption(context, 'limit', 1, 1000) ?? MESSAGES_LIMIT,
        after: stringOption(context, 'after'),
      });
      await showList(context, list, 'messages', (messages, first) => transcript(first.session, messages));
    },
  },
  {
    name: 'sessions audit',
    args: '<session-id>',
    summary: 'the session\'s audit log, in event time order',
    positionals: [1, 1],
    options: PAGE_OPTIONS,
    async run(context) {
      const list = (await context.client()).sessions.audit(context.positionals[0]!, { limit: intOption(context, 'limit', 1, 1000), after: stringOption(context, 'after') });
      await showList(context, list, 'events', auditTable);
    },
  },
  {
    name: 'sessions delete',
    args: '<session-id>',
    summary: 'delete a session with its messages, audit log and traces',
    positionals: [1, 1],
    async run(context) {
      const id = context.positionals[0]!;
      await (await context.client()).sessions.delete(id);
      output(context, { deleted: id }, () => `Deleted session ${id}`);
    },
  },
];
