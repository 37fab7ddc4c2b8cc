/** Memories of a memory group: list, delete one, clear the group. */
import { table } from '../render';
import { intOption, output, PAGE_OPTIONS, requiredOption, showList, stringOption, type Command } from './shared';

export const memoryCommands: Command[] = [
  {
    name: 'memories list',
    summary: 'the memories of a group, newest first',
    options: { group: { type: 'string', value: 'GROUP', help: 'the memory group (required)' }, ...PAGE_OPTIONS },
    async run(context) {
      const list = (await context.client()).memories.list({ group: requiredOption(context, 'group'), limit: intOption(context, 'limit', 1, 1000), after: stringOption(context, 'after') });
      await showList(context, list, 'memories', (memories) =>
        table(memories, [
          { header: 'id', value: (m) => m.id, max: 64 },
          { header: 'status', value: (m) => m.status },
          { header: 'created', value: (m) => m.created_at },
          { header: 'content', value: (m) => m.content, max: 80 },
        ]),
      );
    },
  },
  {
    name: 'memories delete',
    args: '<id>',
    summary: 'delete one memory of a group',
    positionals: [1, 1],
    options: { group: { type: 'string', value: 'GROUP', help: 'the memory group (required)' } },
    async run(context) {
      const id = context.positionals[0]!;
      await (await context.client()).memories.delete(id, { group: requiredOption(context, 'group') });
      output(context, { deleted: id }, () => `Deleted memory ${id}`);
    },
  },
  {
    name: 'memories clear',
    summary: 'delete every memory of a group',
    options: { group: { type: 'string', value: 'GROUP', help: 'the memory group (required)' } },
    async run(context) {
      const group = requiredOption(context, 'group');
      await (await context.client()).memories.deleteAll({ group });
      output(context, { cleared: group }, () => `Deleted every memory of group ${group}`);
    },
  },
];
