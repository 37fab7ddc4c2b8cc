/**
 * POST /traces/{invocation_key}/cancel end to end: the outcome is recorded and the session
 * released at once, the run stops (the fake model receives nothing more for it), the audit
 * log says so, and every status of the contract answers.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer, delay, startFakeOpenAI, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

const agent = (url: string) => ({ model: { name: 'gpt-fake', provider: { name: 'openai', url } }, max_steps: 50 });

const run = (token: string, sessionId: string, key: string, options: { wait?: number; prompt?: string } = {}) =>
  request('POST', `/sessions/${sessionId}?wait_timeout_seconds=${options.wait ?? 0}`, {
    token,
    headers: { 'idempotency-key': key },
    body: { user_prompt: options.prompt ?? 'Go on', agent_name: 'canceller', agent: agent(model.url) },
  });

const cancel = (token: string, key: string) => request('POST', `/traces/${encodeURIComponent(key)}/cancel`, { token });

/** Requests the fake model received for the run of `prompt` (its last user message). */
const callsFor = (prompt: string) => model.requests.filter((sent) => sent.body.messages.findLast((m) => m.role === 'user')?.content === prompt).length;

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !condition(); await sleep(20)) if (Date.now() > deadline) throw new Error('timed out');
}

describe('POST /traces/{invocation_key}/cancel', () => {
  it('cancels during a slow model call: recorded, released, audited, and the model hears nothing more of it', async () => {
    const { token } = await newOrganization();
    const prompt = `slow-${Date.now()}`;
    model.enqueue(delay(1500, toolCall('lookup', { q: 1 })));
    expect((await run(token, 'c1', 'cancel-slow', { prompt })).status).toBe(202);
    await until(() => callsFor(prompt) === 1);

    const cancelled = await cancel(token, 'cancel-slow');

    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ invocation_key: 'cancel-slow', session_id: 'c1', status: 'FAILED', failure: { kind: 'interrupted' } });
    expect(cancelled.body.failure.message).toMatch(/^cancelled/);
    expect(cancelled.body.ended_at).toEqual(expect.any(String));
    // The session is released at once: a new key runs.
    model.enqueue(answer('next one'));
    const next = await run(token, 'c1', 'after-cancel', { wait: 10, prompt: 'next' });
    expect(next.status).toBe(200);
    // The slow call answered with a tool call; no tool span and no further model call followed.
    await sleep(2000);
    expect(callsFor(prompt)).toBe(1);
    const trace = await request('GET', '/traces/cancel-slow?payloads=false', { token });
    expect(trace.body.spans.map((span: { type: string }) => span.type)).toEqual(['model_call']);
    const audit = await request('GET', '/sessions/c1/audit', { token });
    const failed = audit.body.events.find((event: { type: string; invocation_key: string }) => event.type === 'run_failed' && event.invocation_key === 'cancel-slow');
    expect(failed.payload).toMatchObject({ cancelled: true, failure: { kind: 'interrupted' } });
    const succeeded = audit.body.events.find((event: { type: string }) => event.type === 'run_succeeded');
    expect(succeeded.payload.cancelled).toBeUndefined();

    // Re-sending the run request with that key answers 502 interrupted; cancelling again answers 200.
    const resent = await run(token, 'c1', 'cancel-slow', { wait: 1, prompt });
    expect(resent.status).toBe(502);
    expect(resent.body.kind).toBe('interrupted');
    const again = await cancel(token, 'cancel-slow');
    expect(again.status).toBe(200);
    expect(again.body.failure).toEqual(cancelled.body.failure);
  });

  it('cancels during a tool call: the end of the tool is refused and no model call follows', async () => {
    const { token } = await newOrganization();
    const prompt = `tool-${Date.now()}`;
    model.enqueue(toolCall('terminal', { command: 'sleep 2; echo done' }));
    const started = await request('POST', '/sessions/c4?wait_timeout_seconds=0', {
      token,
      headers: { 'idempotency-key': 'cancel-tool' },
      body: { user_prompt: prompt, agent_name: 'canceller', agent: { ...agent(model.url), tools: { terminal: {} } } },
    });
    expect(started.status).toBe(202);
    // The terminal span is RUNNING: the command has started.
    await until(() => callsFor(prompt) === 1);
    for (let seen = false; !seen; await sleep(50)) {
      const trace = await request('GET', '/traces/cancel-tool?payloads=false', { token });
      seen = trace.body.spans.some((span: { type: string; status: string }) => span.type === 'tool_call' && span.status === 'RUNNING');
    }

    expect((await cancel(token, 'cancel-tool')).status).toBe(200);

    await sleep(3000);
    expect(callsFor(prompt)).toBe(1);
    model.enqueue(answer('fresh'));
    expect((await run(token, 'c4', 'after-tool-cancel', { wait: 10, prompt: 'fresh' })).status).toBe(200);
  });

  it('answers a request waiting on the run with 502 interrupted', async () => {
    const { token } = await newOrganization();
    model.enqueue(delay(3000, answer('too late')));
    const waiting = run(token, 'c2', 'cancel-waited', { wait: 20, prompt: `waited-${Date.now()}` });
    await sleep(500);
    const started = Date.now();
    expect((await cancel(token, 'cancel-waited')).status).toBe(200);

    const answered = await waiting;
    expect(answered.status).toBe(502);
    expect(answered.body).toMatchObject({ kind: 'interrupted' });
    expect(answered.body.message).toMatch(/^cancelled/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('answers 409 with the status for an invocation that ended otherwise, and 404 for an unknown or foreign key', async () => {
    const { token } = await newOrganization();
    const other = await newOrganization();
    model.enqueue(answer('done'));
    expect((await run(token, 'c3', 'ended-alone', { wait: 10 })).status).toBe(200);

    const conflict = await cancel(token, 'ended-alone');
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ message: expect.any(String), status: 'SUCCEEDED' });
    expect((await cancel(token, 'no-such-key')).status).toBe(404);
    expect((await cancel(other.token, 'ended-alone')).status).toBe(404);
    expect((await request('POST', '/traces/ended-alone/cancel')).status).toBe(401);
  });
});
