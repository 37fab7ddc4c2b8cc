/**
 * The `agent-sessions` command line: every endpoint as a command, `--json` for scripts,
 * tables and a trace tree for people, exit codes from cli/errors.ts.
 */
import { parseArgs } from 'node:util';
import { AgentSessions } from '../client/index';
import { accountCommands } from './commands/account';
import { agentCommands } from './commands/agents';
import { integrationCommands } from './commands/integrations';
import { inviteCommands } from './commands/invites';
import { memoryCommands } from './commands/memories';
import { run } from './commands/run';
import { secretCommands } from './commands/secrets';
import { sessionCommands } from './commands/sessions';
import { write, type Command, type Context, type Io, type OptionSpec } from './commands/shared';
import { tokenCommands } from './commands/tokens';
import { traceCommands } from './commands/traces';
import { webhookCommands } from './commands/webhooks';
import { resolveSettings } from './config';
import { describeError, EXIT, EXIT_CODE_HELP, exitCodeFor, InterruptedError, UsageError } from './errors';

export type { Io, Stream } from './commands/shared';

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: { type: 'string', value: 'URL', help: 'the service (env AGENT_SESSIONS_URL; default http://127.0.0.1:3000)' },
  token: { type: 'string', value: 'CREDENTIAL', help: 'a user token or API key (env AGENT_SESSIONS_TOKEN)' },
  profile: { type: 'string', value: 'NAME', help: 'the profile of the profile file to use (env AGENT_SESSIONS_PROFILE; default "default")' },
  json: { type: 'boolean', help: 'print the JSON answer, for scripts' },
  help: { type: 'boolean', short: 'h', help: 'show help' },
};

/** Every command, in the order help lists them. */
const commands: Command[] = [
  ...accountCommands,
  run,
  ...sessionCommands,
  ...traceCommands,
  ...agentCommands,
  ...secretCommands,
  ...memoryCommands,
  ...tokenCommands,
  ...inviteCommands,
  ...webhookCommands,
  ...integrationCommands,
];

/** Command groups: the leading words of their commands; a group alone runs its `list`, when it has one. */
const GROUPS = ['sessions', 'traces', 'agents', 'secrets', 'memories', 'tokens', 'invites', 'webhooks', 'integrations', 'integrations otlp'];

function optionUsage(name: string, spec: OptionSpec): string {
  return `--${name}${spec.short ? `, -${spec.short}` : ''}${spec.value ? ` ${spec.value}` : ''}${spec.multiple ? ' ...' : ''}`;
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  const entries = Object.entries(options).map(([name, spec]) => [optionUsage(name, spec), spec.help] as const);
  const width = Math.max(...entries.map(([usage]) => usage.length));
  return entries.map(([usage, help]) => `  ${usage.padEnd(width)}  ${help}`);
}

function commandUsage(command: Command): string {
  return `agent-sessions ${command.name}${command.args ? ` ${command.args}` : ''}${command.options ? ' [options]' : ''}`;
}

/** The top-level help: commands, global options, configuration and exit codes. */
export function mainHelp(): string {
  const width = Math.max(...commands.map((c) => `${c.name}${c.args ? ` ${c.args}` : ''}`.length));
  return [
    'agent-sessions: the Agent Session Service from the command line',
    '',
    'usage: agent-sessions <command> [arguments] [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${`${c.name}${c.args ? ` ${c.args}` : ''}`.padEnd(width)}  ${c.summary}`),
    '',
    '"agent-sessions <command> --help" shows a command\'s options. A group alone (sessions,',
    'traces, agents, secrets, memories, tokens, webhooks) lists it.',
    '',
    'On a terminal "run" shows the invocation\'s spans live as a tree; with --json it streams',
    'its events as JSON lines, then the answer. Ctrl-C detaches (exit 130): "traces follow KEY"',
    're-attaches, "traces cancel KEY" stops it (or give --cancel-on-interrupt).',
    '',
    'global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'configuration: flags, then AGENT_SESSIONS_URL / AGENT_SESSIONS_TOKEN, then the profile',
    '(--profile or AGENT_SESSIONS_PROFILE, default "default") of the profile file:',
    'AGENT_SESSIONS_CONFIG, else $XDG_CONFIG_HOME/agent-sessions/config.json, else',
    '~/.config/agent-sessions/config.json (written 0600 by "login"). A profile\'s token is',
    'sent only to that profile\'s URL.',
    '',
    'exit codes:',
    ...EXIT_CODE_HELP.map(([code, meaning]) => `  ${String(code).padStart(3)}  ${meaning}`),
    '',
  ].join('\n');
}

function commandHelp(command: Command): string {
  return [
    `usage: ${commandUsage(command)}`,
    '',
    command.summary,
    ...(command.options ? ['', 'options:', ...optionLines(command.options)] : []),
    '',
    'global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
  ].join('\n');
}

/** The command named by the leading words of `argv`, and `argv` without those words. */
function findCommand(argv: string[]): { command?: Command; rest: string[]; group?: string } {
  // Command words may follow global options: skip those (and their values) first. Words
  // are taken while they name a group, so `integrations otlp set` is one command.
  const words: number[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('-')) {
      if (words.length) break;
      const name = arg.replace(/^--?/, '').split('=')[0]!;
      if (GLOBAL_OPTIONS[name]?.type === 'string' && !arg.includes('=')) i++;
      continue;
    }
    words.push(i);
    if (!GROUPS.includes(words.map((w) => argv[w]!).join(' '))) break;
  }
  const names = words.map((i) => argv[i]!);
  const without = (count: number) => argv.filter((_, i) => !words.slice(0, count).includes(i));
  if (names.length === 0) return { rest: argv };
  // The longest leading words that name a command, else the group they are in.
  for (let count = names.length; count > 0; count--) {
    const name = names.slice(0, count).join(' ');
    const command = commands.find((c) => c.name === name);
    if (command) return { command, rest: without(count) };
    if (GROUPS.includes(name)) {
      const list = commands.find((c) => c.name === `${name} list`);
      if (count === names.length && list) return { command: list, rest: without(count) };
      return { rest: without(count), group: name };
    }
  }
  return { rest: argv, group: names[0] };
}

/** Runs the CLI with `argv` (without node and the script); resolves to the exit code. */
export async function runCli(argv: string[], io: Io): Promise<number> {
  let json = argv.includes('--json');
  try {
    if (argv[0] === 'help') {
      const { command } = findCommand(argv.slice(1));
      write(io.stdout, command ? commandHelp(command) : mainHelp());
      return EXIT.ok;
    }
    const { command, rest, group } = findCommand(argv);
    if (!command) {
      if (group === undefined) {
        const asked = argv.includes('--help') || argv.includes('-h');
        write(asked ? io.stdout : io.stderr, mainHelp());
        return asked ? EXIT.ok : EXIT.usage;
      }
      const known = commands.filter((c) => group && c.name.startsWith(`${group} `)).map((c) => c.name);
      throw new UsageError(known.length ? `"${group}" needs a subcommand: ${known.join(', ')}` : `unknown command "${group}"`);
    }
    const options = { ...GLOBAL_OPTIONS, ...command.options };
    let parsed;
    try {
      const parseOptions = Object.entries(options).map(([name, spec]) => [name, { type: spec.type, ...(spec.short ? { short: spec.short } : {}), ...(spec.multiple ? { multiple: true } : {}) }]);
      parsed = parseArgs({ args: rest, options: Object.fromEntries(parseOptions), allowPositionals: true, strict: true });
    } catch (error) {
      throw new UsageError(`${command.name}: ${(error as Error).message.split('\n')[0]}`);
    }
    const values = parsed.values as Context['values'];
    json = values.json === true;
    if (values.help) {
      write(io.stdout, commandHelp(command));
      return EXIT.ok;
    }
    const [min, max] = command.positionals ?? [0, 0];
    if (parsed.positionals.length < min || parsed.positionals.length > max) {
      throw new UsageError(`usage: ${commandUsage(command)}`);
    }
    const flags = { url: values.url as string | undefined, token: values.token as string | undefined, profile: values.profile as string | undefined };
    let client: AgentSessions | undefined;
    const context: Context = {
      values,
      positionals: parsed.positionals,
      io,
      json,
      settings: (settingsOptions) => resolveSettings(flags, io.env, settingsOptions),
      client: async () => {
        if (!client) {
          const settings = await resolveSettings(flags, io.env);
          client = new AgentSessions({ baseUrl: settings.url, token: settings.token });
        }
        return client;
      },
    };
    await command.run(context);
    return EXIT.ok;
  } catch (error) {
    const code = exitCodeFor(error);
    if (json) {
      const status = typeof (error as { status?: unknown }).status === 'number' ? (error as { status: number }).status : undefined;
      const body = (error as { body?: Record<string, unknown> }).body;
      const message = error instanceof Error ? error.message : String(error);
      write(io.stderr, JSON.stringify({ error: { ...body, message, ...(status ? { status } : {}), exit_code: code } }));
    } else {
      // Ctrl-C is the person's own doing, not an error.
      write(io.stderr, error instanceof InterruptedError ? describeError(error) : `error: ${describeError(error)}`);
    }
    return code;
  }
}
