/**
 * The `agent-sessions` command line: every endpoint as a command, `--json` for scripts,
 * tables and a trace tree for people, exit codes from cli/errors.ts.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { AgentSessions } from '../client/index';
import type { PagePromise } from '../client/pagination';
import type { AgentConfig, SessionRunResponse, Span } from '../client/types';
import { resolveSettings, saveProfile, type Settings } from './config';
import { describeError, EXIT, EXIT_CODE_HELP, exitCodeFor, UsageError } from './errors';
import { auditTable, duration, fields, table, traceTree, transcript } from './render';
import { startSpinner } from './spinner';

export interface Stream {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** Where the CLI reads and writes: the process's own streams, or a test's. */
export interface Io {
  stdout: Stream;
  stderr: Stream;
  stdin: AsyncIterable<Buffer | string> & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's placeholder in help, e.g. `SECONDS`. */
  value?: string;
  help: string;
}

interface Context {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  io: Io;
  json: boolean;
  settings(options?: { creating?: boolean }): Promise<Settings>;
  client(): Promise<AgentSessions>;
}

interface Command {
  name: string;
  /** Positional arguments as help shows them. */
  args?: string;
  summary: string;
  options?: Record<string, OptionSpec>;
  /** Fewest and most positional arguments. */
  positionals?: [number, number];
  run(context: Context): Promise<void>;
}

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: { type: 'string', value: 'URL', help: 'the service (env AGENT_SESSIONS_URL; default http://127.0.0.1:3000)' },
  token: { type: 'string', value: 'CREDENTIAL', help: 'a user token or API key (env AGENT_SESSIONS_TOKEN)' },
  profile: { type: 'string', value: 'NAME', help: 'the profile of the profile file to use (env AGENT_SESSIONS_PROFILE; default "default")' },
  json: { type: 'boolean', help: 'print the JSON answer, for scripts' },
  help: { type: 'boolean', short: 'h', help: 'show help' },
};

const PAGE_OPTIONS: Record<string, OptionSpec> = {
  limit: { type: 'string', value: 'N', help: 'items per page' },
  after: { type: 'string', value: 'CURSOR', help: 'start after this cursor (a previous page\'s next_cursor)' },
  all: { type: 'boolean', help: 'follow the cursors and show every page' },
};

/** The CLI default page size of session messages (the spec's). */
const MESSAGES_LIMIT = 100;

function write(stream: Stream, text: string): void {
  stream.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Prints `value` as JSON in --json mode, else what `human` renders. */
function output(context: Context, value: unknown, human: () => string): void {
  write(context.io.stdout, context.json ? JSON.stringify(value, null, 2) : human());
}

function stringOption(context: Context, name: string): string | undefined {
  const value = context.values[name];
  return typeof value === 'string' ? value : undefined;
}

function requiredOption(context: Context, name: string): string {
  const value = stringOption(context, name);
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function intOption(context: Context, name: string, min: number, max: number): number | undefined {
  const text = stringOption(context, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, not "${text}"`);
  return value;
}

async function readStdin(io: Io, prompt: string): Promise<string> {
  if (io.stdin.isTTY) io.stderr.write(`${prompt} (end with Ctrl-D): `);
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/**
 * One page of a list (or every page with --all): JSON as the service sent it (merged
 * under `key` with --all), else `render`; a hint on stderr when more pages follow.
 */
async function showList<Page extends { next_cursor?: string }, Item>(
  context: Context,
  list: PagePromise<Page, Item>,
  key: string,
  render: (items: Item[], first: Page) => string,
): Promise<void> {
  if (context.values.all) {
    const first = await list;
    const items = await list.all();
    const { next_cursor: _, ...rest } = first;
    output(context, { ...rest, [key]: items }, () => render(items, first));
    return;
  }
  const page = await list;
  output(context, page, () => render((page as unknown as Record<string, Item[]>)[key]!, page));
  if (page.next_cursor !== undefined && !context.json) write(context.io.stderr, `more: add --after ${page.next_cursor} (or --all)`);
}

async function readAgent(source: string): Promise<Record<string, unknown>> {
  let text = source;
  if (!source.trimStart().startsWith('{')) {
    try {
      text = await readFile(source, 'utf8');
    } catch (error) {
      throw new UsageError(`--agent: cannot read ${source} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a JSON file or inline JSON`);
    }
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
    return parsed as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`--agent: ${(error as Error).message}`);
  }
}

/** The agent configuration from --agent, with --model, --provider... laid over it. */
async function agentConfig(context: Context): Promise<AgentConfig> {
  const source = stringOption(context, 'agent');
  const agent = source ? await readAgent(source) : {};
  const model = { ...((agent.model as Record<string, unknown> | undefined) ?? {}) };
  const provider = { ...((model.provider as Record<string, unknown> | undefined) ?? {}) };
  const set = (target: Record<string, unknown>, field: string, option: string) => {
    const value = stringOption(context, option);
    if (value !== undefined) target[field] = value;
  };
  set(model, 'name', 'model');
  set(provider, 'name', 'provider');
  set(provider, 'url', 'provider-url');
  set(provider, 'credential', 'credential');
  if (model.name === undefined) throw new UsageError('give the model: --model NAME (and --provider, --provider-url, --credential), or --agent with a "model"');
  provider.name ??= 'openai';
  agent.model = { ...model, provider };
  set(agent, 'system_prompt', 'system-prompt');
  const maxSteps = intOption(context, 'max-steps', 1, 200);
  if (maxSteps !== undefined) agent.max_steps = maxSteps;
  return agent as AgentConfig;
}

const run: Command = {
  name: 'run',
  args: '<session-id> [prompt]',
  summary: 'run or resume a session (the prompt from the argument, or stdin)',
  positionals: [1, 2],
  options: {
    'agent-name': { type: 'string', value: 'NAME', help: 'the agent the invocation runs as (required)' },
    agent: { type: 'string', value: 'FILE|JSON', help: 'the agent configuration, a JSON file or inline JSON' },
    model: { type: 'string', value: 'NAME', help: 'the model name (sets agent.model.name)' },
    provider: { type: 'string', value: 'NAME', help: 'openai (default), anthropic or bedrock' },
    'provider-url': { type: 'string', value: 'URL', help: 'the provider endpoint' },
    credential: { type: 'string', value: 'REF', help: 'the provider key as a secret reference, e.g. {{secret:OPENAI_API_KEY}}' },
    'system-prompt': { type: 'string', value: 'TEXT', help: 'the system prompt' },
    'max-steps': { type: 'string', value: 'N', help: 'model calls an attempt may make (1 to 200)' },
    key: { type: 'string', value: 'KEY', help: 'the invocation key (Idempotency-Key); the same key and body re-attach' },
    wait: { type: 'string', value: 'SECONDS', help: 'how long to wait for the answer, 0 to 1800 (default 1800); 0 returns once accepted' },
  },
  async run(context) {
    const [sessionId, argumentPrompt] = context.positionals as [string, string | undefined];
    const agentName = requiredOption(context, 'agent-name');
    const agent = await agentConfig(context);
    const wait = intOption(context, 'wait', 0, 1800) ?? 1800;
    const prompt = argumentPrompt === undefined || argumentPrompt === '-' ? await readStdin(context.io, 'prompt') : argumentPrompt;
    if (!prompt) throw new UsageError('the prompt is empty: give it as an argument or on stdin');
    const client = await context.client();
    const stop = wait > 0 ? startSpinner(context.io.stderr, `running ${sessionId}`) : () => {};
    const started = Date.now();
    let answer: SessionRunResponse;
    try {
      answer = await client.sessions.run(sessionId, {
        user_prompt: prompt,
        agent_name: agentName,
        agent,
        wait_timeout_seconds: wait,
        ...(stringOption(context, 'key') ? { idempotency_key: stringOption(context, 'key') } : {}),
      });
    } finally {
      stop();
    }
    output(context, answer, () => (answer.message ? answer.message.content : `accepted: invocation ${answer.invocation_key} is running in session ${sessionId}`));
    if (!context.json) {
      const took = answer.message ? ` · ${duration(Date.now() - started)}` : '';
      write(context.io.stderr, `invocation ${answer.invocation_key} · session ${sessionId}${took} · trace: agent-sessions traces show ${answer.invocation_key}`);
    }
  },
};

const commands: Command[] = [
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
  run,
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
  {
    name: 'traces list',
    summary: 'invocations, newest first (default window: the last 31 days)',
    options: {
      'agent-name': { type: 'string', value: 'NAME', help: 'only this agent' },
      'agent-revision': { type: 'string', value: 'REVISION', help: 'only this revision' },
      status: { type: 'string', value: 'STATUS', help: 'RUNNING, SUCCEEDED or FAILED' },
      session: { type: 'string', value: 'ID', help: 'only this session' },
      since: { type: 'string', value: 'TIME', help: 'started at or after (ISO 8601)' },
      until: { type: 'string', value: 'TIME', help: 'started at or before (ISO 8601)' },
      ...PAGE_OPTIONS,
    },
    async run(context) {
      const status = stringOption(context, 'status');
      if (status !== undefined && !['RUNNING', 'SUCCEEDED', 'FAILED'].includes(status)) throw new UsageError(`--status must be RUNNING, SUCCEEDED or FAILED, not "${status}"`);
      const list = (await context.client()).traces.list({
        agent_name: stringOption(context, 'agent-name'),
        agent_revision: stringOption(context, 'agent-revision'),
        status: status as 'RUNNING' | 'SUCCEEDED' | 'FAILED' | undefined,
        session_id: stringOption(context, 'session'),
        since: stringOption(context, 'since'),
        until: stringOption(context, 'until'),
        limit: intOption(context, 'limit', 1, 100),
        after: stringOption(context, 'after'),
      });
      await showList(context, list, 'traces', (traces) =>
        table(traces, [
          { header: 'invocation', value: (t) => t.invocation_key, max: 40 },
          { header: 'session', value: (t) => t.session_id, max: 30 },
          { header: 'agent', value: (t) => t.agent_name, max: 24 },
          { header: 'status', value: (t) => t.status },
          { header: 'started', value: (t) => t.started_at },
          { header: 'duration', value: (t) => (t.ended_at ? duration(Date.parse(t.ended_at) - Date.parse(t.started_at)) : 'running') },
        ]),
      );
    },
  },
  {
    name: 'traces show',
    args: '<invocation-key>',
    summary: 'one invocation: its attempts and its spans as a tree',
    positionals: [1, 1],
    options: {
      payloads: { type: 'boolean', help: 'include each span\'s input and output' },
      attempts: { type: 'string', value: 'final|all', help: 'all: also the spans of earlier attempts (default final)' },
    },
    async run(context) {
      const attempts = stringOption(context, 'attempts');
      if (attempts !== undefined && attempts !== 'final' && attempts !== 'all') throw new UsageError(`--attempts must be final or all, not "${attempts}"`);
      const list = (await context.client()).traces.get(context.positionals[0]!, { payloads: context.values.payloads === true, ...(attempts ? { attempts } : {}) });
      const { spans: _, next_cursor: __, ...trace } = await list;
      const spans: Span[] = await list.all();
      output(context, { ...trace, spans }, () => traceTree(trace, spans));
    },
  },
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

/** Groups whose bare name runs their `list`. */
const GROUPS = ['sessions', 'traces', 'agents', 'secrets', 'memories', 'tokens', 'invites'];

function optionUsage(name: string, spec: OptionSpec): string {
  return `--${name}${spec.short ? `, -${spec.short}` : ''}${spec.value ? ` ${spec.value}` : ''}`;
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
    'traces, agents, secrets, memories, tokens) lists it.',
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
    ...EXIT_CODE_HELP.map(([code, meaning]) => `  ${String(code).padStart(2)}  ${meaning}`),
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
  // Command words may follow global options: skip those (and their values) first.
  const words: number[] = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('-')) {
      if (words.length) break;
      const name = arg.replace(/^--?/, '').split('=')[0]!;
      if (GLOBAL_OPTIONS[name]?.type === 'string' && !arg.includes('=')) i++;
      continue;
    }
    words.push(i);
    if (words.length === 1 && !GROUPS.includes(arg)) break;
  }
  const [first, second] = words.map((i) => argv[i]!);
  const without = (count: number) => argv.filter((_, i) => !words.slice(0, count).includes(i));
  if (first === undefined) return { rest: argv };
  if (GROUPS.includes(first)) {
    const named = second !== undefined ? commands.find((c) => c.name === `${first} ${second}`) : undefined;
    if (named) return { command: named, rest: without(2) };
    const list = commands.find((c) => c.name === `${first} list`);
    if (second === undefined && list) return { command: list, rest: without(1) };
    return { rest: without(1), group: first };
  }
  const command = commands.find((c) => c.name === first);
  return command ? { command, rest: without(1) } : { rest: argv, group: first };
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
      parsed = parseArgs({ args: rest, options: Object.fromEntries(Object.entries(options).map(([name, spec]) => [name, { type: spec.type, ...(spec.short ? { short: spec.short } : {}) }])), allowPositionals: true, strict: true });
    } catch (error) {
      throw new UsageError(`${command.name}: ${(error as Error).message.split('\n')[0]}`);
    }
    const values = parsed.values as Record<string, string | boolean | undefined>;
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
      write(io.stderr, `error: ${describeError(error)}`);
    }
    return code;
  }
}
