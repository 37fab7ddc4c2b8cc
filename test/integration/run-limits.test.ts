/**
 * The agent configuration's `limits`: a looping agent stops at `max_tokens` and at
 * `max_duration_seconds` on its first attempt, with a message naming the limit and no
 * further attempt; out-of-range and unknown limits are refused before anything runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer, delay, startFakeOpenAI, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

const usage = { prompt_tokens: 10, completion_tokens: 5 };

const run = (token: string, sessionId: string, limits: unknown, wait = 20) =>
  request('POST', `/sessions/${sessionId}?wait_timeout_seconds=${wait}`, {
    token,
    body: { user_prompt: `loop ${sessionId}`, agent_name: 'bounded', agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } }, max_steps: 100, limits } },
  });

const callsFor = (sessionId: string) => model.requests.filter((sent) => sent.body.messages.findLast((m) => m.role === 'user')?.content === `loop ${sessionId}`).length;

describe('limits', () => {
  it('stops a looping agent at max_tokens before the call that would start past it, with no further attempt', async () => {
    const { token } = await newOrganization();
    // 15 tokens a call: calls start at 0, 15 and 30 tokens used; the fourth would start at 45.
    model.enqueue(...Array.from({ length: 3 }, () => toolCall('lookup', { q: 1 }, usage)));

    const answered = await run(token, 'tokens', { max_tokens: 40 });

    expect(answered.status).toBe(502);
    expect(answered.body.kind).toBe('interrupted');
    expect(answered.body.message).toMatch(/max_tokens \(40\)/);
    expect(callsFor('tokens')).toBe(3);
    const trace = await request('GET', `/traces/${answered.headers['idempotency-key']}?payloads=false`, { token });
    expect(trace.body.attempts).toHaveLength(1);
    expect(trace.body.failure.message).toMatch(/max_tokens/);
  });

  it('succeeds when the final answer came from the call that crossed max_tokens', async () => {
    const { token } = await newOrganization();
    model.enqueue(toolCall('lookup', { q: 1 }, usage), answer('done', usage));

    const answered = await run(token, 'crossing', { max_tokens: 20 });

    expect(answered.status).toBe(200);
    expect(answered.body.message.content).toBe('done');
  });

  it('abandons the call in flight at max_duration_seconds and records the outcome within 5 s, with no further attempt', async () => {
    const { token } = await newOrganization();
    model.enqueue(delay(8000, answer('too late')));
    const started = Date.now();

    const answered = await run(token, 'duration', { max_duration_seconds: 1 });

    expect(answered.status).toBe(502);
    expect(answered.body.kind).toBe('interrupted');
    expect(answered.body.message).toMatch(/max_duration_seconds \(1 s\)/);
    expect(Date.now() - started).toBeLessThan(6000);
    const trace = await request('GET', `/traces/${answered.headers['idempotency-key']}?payloads=false`, { token });
    expect(trace.body.attempts).toHaveLength(1);
    expect(callsFor('duration')).toBe(1);
  });

  it.each([
    [{ max_tokens: 0 }],
    [{ max_tokens: 100_000_001 }],
    [{ max_tokens: 1.5 }],
    [{ max_duration_seconds: 0 }],
    [{ max_duration_seconds: 86_401 }],
    [{ max_cost: 3 }],
    ['ten'],
  ])('refuses limits %j with 400 before anything runs', async (limits) => {
    const { token } = await newOrganization();
    const refused = await run(token, 'refused', limits, 0);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/limits/);
    expect((await request('GET', '/sessions/refused', { token })).status).toBe(404);
  });
});
