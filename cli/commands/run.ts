/**
 * `run`: run or resume a session, the agent configuration from --agent and the flags laid
 * over it. On a terminal (or with --json) it follows the invocation's events while it waits.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AgentSessions } from '../../client/index';
import type { AgentConfig, SessionRunParams, SessionRunResponse } from '../../client/types';
import { UsageError } from '../errors';
import { FOLLOW_OPTIONS, interruptible, showEvents } from '../follow';
import { duration } from '../render';
import { startSpinner } from '../spinner';
import { intOption, output, readStdin, requiredOption, stringOption, write, type Command, type Context } from './shared';

/** How long the events may lag behind the answer before the view stops waiting for them. */
const CATCH_UP_MS = 2000;

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

export const run: Command = {
  name: 'run',
  args: '<session-id> [prompt]',
  summary: 'run or resume a session (the prompt from the argument, or stdin); on a terminal its spans show live',
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
    ...FOLLOW_OPTIONS,
  },
  async run(context) {
    const [sessionId, argumentPrompt] = context.positionals as [string, string | undefined];
    const agentName = requiredOption(context, 'agent-name');
    const agent = await agentConfig(context);
    const wait = intOption(context, 'wait', 0, 1800) ?? 1800;
    const prompt = argumentPrompt === undefined || argumentPrompt === '-' ? await readStdin(context.io, 'prompt') : argumentPrompt;
    if (!prompt) throw new UsageError('the prompt is empty: give it as an argument or on stdin');
    const client = await context.client();
    const key = stringOption(context, 'key');
    const params: SessionRunParams = { user_prompt: prompt, agent_name: agentName, agent, wait_timeout_seconds: wait, ...(key ? { idempotency_key: key } : {}) };
    // Live on a terminal, JSON lines with --json; elsewhere (and with --wait 0) only the answer.
    const follow = wait > 0 && (context.json || context.io.stderr.isTTY === true);
    const started = Date.now();
    const answer = follow ? await runFollowing(context, client, sessionId, params) : await runWaiting(context, client, sessionId, params);
    if (follow && context.json) write(context.io.stdout, JSON.stringify(answer));
    else output(context, answer, () => (answer.message ? answer.message.content : `accepted: invocation ${answer.invocation_key} is running in session ${sessionId}`));
    if (!context.json) {
      const took = answer.message ? ` · ${duration(Date.now() - started)}` : '';
      write(context.io.stderr, `invocation ${answer.invocation_key} · session ${sessionId}${took} · trace: agent-sessions traces show ${answer.invocation_key}`);
    }
  },
};

/** Runs and waits for the answer, with a spinner on a terminal. */
async function runWaiting(context: Context, client: AgentSessions, sessionId: string, params: SessionRunParams): Promise<SessionRunResponse> {
  const stop = params.wait_timeout_seconds ? startSpinner(context.io.stderr, `running ${sessionId}`) : () => {};
  try {
    return await client.sessions.run(sessionId, params);
  } finally {
    stop();
  }
}

/**
 * Runs with the invocation's events shown as they happen: the run is accepted first (wait
 * 0), then re-attached to (the same key and body) for its answer while its events are
 * followed. The answer decides the output and the exit code, as when not following.
 */
async function runFollowing(context: Context, client: AgentSessions, sessionId: string, params: SessionRunParams): Promise<SessionRunResponse> {
  const deadline = Date.now() + (params.wait_timeout_seconds ?? 0) * 1000;
  const accepted = await client.sessions.run(sessionId, { ...params, idempotency_key: params.idempotency_key ?? randomUUID(), wait_timeout_seconds: 0 });
  const key = accepted.invocation_key;
  return interruptible(context, key, async (signal) => {
    const caughtUp = new AbortController();
    // The view is a courtesy: when the events cannot be read, the answer still comes.
    const following = showEvents(context, client, key, AbortSignal.any([signal, caughtUp.signal])).catch(() => undefined);
    const remaining = Math.max(1, Math.floor((deadline - Date.now()) / 1000));
    const answer = accepted.message ? Promise.resolve(accepted) : client.sessions.run(sessionId, { ...params, idempotency_key: key, wait_timeout_seconds: remaining }, { signal });
    let timer: NodeJS.Timeout | undefined;
    const answered = answer.finally(() => (timer = setTimeout(() => caughtUp.abort(), CATCH_UP_MS)));
    const [result] = await Promise.allSettled([answered, following]);
    clearTimeout(timer);
    if (result.status === 'rejected') throw result.reason;
    return result.value;
  });
}
