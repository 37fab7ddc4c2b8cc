/** Agents: list, show and one revision. */
import { fields, table } from '../render';
import { output, type Command } from './shared';

export const agentCommands: Command[] = [
  {
    name: 'agents list',
    summary: 'agents and how many revisions each has',
    async run(context) {
      const { agents } = await (await context.client()).agents.list();
      output(context, { agents }, () => table(agents, [
        { header: 'name', value: (a) => a.name },
        { header: 'revisions', value: (a) => a.revision_count },
        { header: 'created', value: (a) => a.created_at },
        { header: 'updated', value: (a) => a.updated_at },
      ]));
    },
  },
  {
    name: 'agents show',
    args: '<name>',
    summary: 'an agent: its current configuration and its revisions',
    positionals: [1, 1],
    async run(context) {
      const agent = await (await context.client()).agents.get(context.positionals[0]!);
      output(context, agent, () =>
        `${fields([['agent', agent.name], ['current', agent.current.revision], ['since', agent.current.created_at]])}\n` +
        `${table(agent.revisions, [{ header: 'revision', value: (r) => r.revision }, { header: 'created', value: (r) => r.created_at }])}\n` +
        `${JSON.stringify(agent.current.config, null, 2)}`,
      );
    },
  },
  {
    name: 'agents revision',
    args: '<name> <revision>',
    summary: 'one revision of an agent with its configuration',
    positionals: [2, 2],
    async run(context) {
      const revision = await (await context.client()).agents.revision(context.positionals[0]!, context.positionals[1]!);
      output(context, revision, () => `${fields([['revision', revision.revision], ['created', revision.created_at]])}\n${JSON.stringify(revision.config, null, 2)}`);
    },
  },
];
