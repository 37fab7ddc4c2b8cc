import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { queryPrefix } from '#data/dynamo';
import { keys } from '#data/keys';
import { answer, startFakeOpenAI, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

// The terminal tool end to end: the run-steps task (a child process of the local Step
// Functions) invokes the sandbox function through the local Lambda endpoint, which runs
// it in a child process of its own.
const CANARY = 'sk-terminal-canary-4d2b8e';

let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

/** Runs a session with the terminal tool and answers with the tool results the model was sent, in order. */
async function runWithTerminal(
  terminal: Record<string, unknown>,
  key: string,
  organization?: { token: string; organizationId: string },
  sessionId = key,
) {
  const { token, organizationId } = organization ?? (await newOrganization());
  if (!organization) await request('POST', '/secrets', { token, body: { name: 'MODEL_KEY', value: CANARY } });
  const before = model.requests.length;
  const res = await request('POST', `/sessions/${sessionId}`, {
    token,
    headers: { 'idempotency-key': key },
    body: {
      user_prompt: 'Use the terminal',
      agent_name: 'shell',
      agent: {
        model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url, credential: '{{secret:MODEL_KEY}}' } },
        tools: { terminal },
      },
    },
  });
  const sent = model.requests.slice(before);
  const toolResults = (sent.at(-1)?.body.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));
  return { res, sent, toolResults, organizationId, token };
}

describe('the terminal tool', () => {
  it('runs commands in bubblewrap: unprivileged, a read-only system, its own /tmp, no sight of the checkout or the data', async () => {
    const checkout = process.cwd();
    model.enqueue(
      toolCall('terminal', {
        command: [
          'echo "uid=$(id -u)"',
          `ls -A ${checkout} | wc -l | sed 's/^/checkout-entries=/'`,
          `test -e ${checkout}/package.json && echo package-visible || echo package-hidden`,
          'touch /usr/intruder 2>/dev/null && echo usr-writable || echo usr-read-only',
          'echo probe > own.txt && echo workspace-writable',
          'echo "tmp=$TMPDIR"; ls -A /tmp/lambda | grep -v workspaces | wc -l | sed "s/^/tmp-others=/"',
          'echo x > /tmp/scratch && echo tmp-writable',
        ].join('; '),
      }),
      answer('Looked around'),
    );

    const { res, toolResults } = await runWithTerminal({}, 'terminal-isolated');

    expect(res.status).toBe(200);
    const output = toolResults[0]!;
    expect(output).toContain('uid=65534');
    expect(output).toContain('checkout-entries=');
    expect(output).toContain('package-hidden');
    expect(output).toContain('usr-read-only');
    expect(output).toContain('workspace-writable');
    expect(output).toContain('tmp=/tmp/lambda/workspaces/');
    expect(output).toContain('tmp-others=0');
    expect(output).toContain('tmp-writable');
    // Only the files the environment starts from are shown, never the project's sources or data.
    const listed = Number(/checkout-entries=(\d+)/.exec(output)![1]);
    expect(listed).toBeLessThanOrEqual(1);
  });

  it('runs commands in a workspace that keeps its files, with no credential in the environment', async () => {
    model.enqueue(
      toolCall('terminal', { command: 'echo hi > f.txt' }),
      toolCall('terminal', { command: 'cat f.txt; env' }),
      answer('The file says hi'),
    );

    const { res, sent, toolResults, organizationId } = await runWithTerminal({}, 'terminal-files');

    expect(res.status).toBe(200);
    expect(res.body.message).toMatchObject({ role: 'assistant', content: 'The file says hi' });
    expect(sent).toHaveLength(3);
    expect(sent[0]!.body.tools?.map((tool) => tool.type === 'function' && tool.function.name)).toEqual(['terminal']);
    expect(toolResults).toHaveLength(2);
    expect(toolResults[0]).toBe('exit code: 0\n--- stdout ---\n(empty)\n--- stderr ---\n(empty)');
    expect(toolResults[1]).toMatch(/^exit code: 0\n--- stdout ---\nhi\n/);
    const environment = toolResults[1]!;
    expect(environment).toMatch(/^PATH=/m);
    expect(environment).not.toMatch(/^AWS_/m);
    expect(environment).not.toContain(CANARY);
    const serviceEnv = inject('serviceEnv');
    for (const name of Object.keys(serviceEnv)) expect(environment).not.toContain(`${name}=`);
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']) expect(environment).not.toContain(serviceEnv[name]);

    const spans = await queryPrefix(keys.spansOf(organizationId, 'terminal-files'), { consistent: true });
    expect(spans.map((span) => [span.id, span.span_type, span.name, span.parent_id, span.status])).toEqual([
      ['inv-1.att-1.1', 'model_call', 'gpt-fake', null, 'SUCCEEDED'],
      ['inv-1.att-1.2', 'tool_call', 'terminal', 'inv-1.att-1.1', 'SUCCEEDED'],
      ['inv-1.att-1.3', 'model_call', 'gpt-fake', null, 'SUCCEEDED'],
      ['inv-1.att-1.4', 'tool_call', 'terminal', 'inv-1.att-1.3', 'SUCCEEDED'],
      ['inv-1.att-1.5', 'model_call', 'gpt-fake', null, 'SUCCEEDED'],
    ]);
  });

  it('gives the next invocation of the session an empty workspace', async () => {
    model.enqueue(toolCall('terminal', { command: 'echo x > g.txt' }), answer('written'));
    const first = await runWithTerminal({}, 'terminal-first');
    expect(first.res.status).toBe(200);
    model.enqueue(toolCall('terminal', { command: 'ls -A | wc -l' }), answer('empty'));

    const { res, toolResults } = await runWithTerminal({}, 'terminal-second', first, 'terminal-first');

    expect(res.status).toBe(200);
    expect(toolResults).toEqual(['exit code: 0\n--- stdout ---\n0\n--- stderr ---\n(empty)']);
  });

  it('tells the model a command ran out of time, and the run still finishes', async () => {
    model.enqueue(toolCall('terminal', { command: 'echo started; sleep 5' }), answer('It took too long'));

    const { res, toolResults } = await runWithTerminal({ timeout_seconds: 1 }, 'terminal-timeout');

    expect(res.status).toBe(200);
    expect(res.body.message.content).toBe('It took too long');
    expect(toolResults).toEqual([
      'timed out after 1 s: the command and everything it started were killed\n--- stdout ---\nstarted\n--- stderr ---\n(empty)',
    ]);
  });
});
