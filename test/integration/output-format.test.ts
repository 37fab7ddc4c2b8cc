import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer, startFakeOpenAI, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

// output_format json_schema end to end: the model is asked for the schema, an answer that
// does not parse or validate goes back to it with the reason, and only a valid one is final.
let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

const schema = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer', minimum: 0 } },
  required: ['city', 'population'],
  additionalProperties: false,
};

function run(token: string, sessionId: string, agent: Record<string, unknown>) {
  return request('POST', `/sessions/${sessionId}`, {
    token,
    body: {
      user_prompt: 'Largest city of France?',
      agent_name: 'structured',
      agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } }, ...agent },
    },
  });
}

describe('output_format json_schema', () => {
  it('asks for the schema and re-asks until the answer parses and validates', async () => {
    const { token } = await newOrganization();
    const first = model.requests.length;
    model.enqueue(answer('Paris, about 2.1 million people'), answer('{"city": "Paris", "population": "2.1M"}'), answer('{"city": "Paris", "population": 2102650}'));

    const res = await run(token, 'json-1', { output_format: { type: 'json_schema', schema } });

    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.message.content)).toEqual({ city: 'Paris', population: 2102650 });
    const sent = model.requests.slice(first);
    expect(sent).toHaveLength(3);
    expect(sent[0]!.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'answer', schema } });
    const corrections = sent.slice(1).map((r) => r.body.messages.at(-1));
    expect(corrections[0]).toMatchObject({ role: 'user', content: expect.stringContaining('not valid JSON') });
    expect(corrections[1]).toMatchObject({ role: 'user', content: expect.stringContaining('/population must be integer') });
  });

  it('fails the run as interrupted when no valid answer comes within max_steps', async () => {
    const { token } = await newOrganization();
    // max_steps ends the invocation at once: no other attempt would do better.
    model.enqueue(answer('not json'), answer('{"city": 1}'));

    const res = await run(token, 'json-2', { output_format: { type: 'json_schema', schema }, max_steps: 2 });

    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ kind: 'interrupted', message: expect.stringContaining('max_steps (2)') });
  });

  it('leaves text answers alone', async () => {
    const { token } = await newOrganization();
    const first = model.requests.length;
    model.enqueue(answer('Paris.'));

    const res = await run(token, 'text-1', { output_format: { type: 'text' } });

    expect(res.status).toBe(200);
    expect(res.body.message.content).toBe('Paris.');
    expect(model.requests[first]!.body.response_format).toBeUndefined();
  });

  it.each([
    ['a schema that is not JSON Schema', { type: 'objekt' }, 'not a usable JSON Schema'],
    ['an unresolvable reference', { $ref: 'https://example.com/schema.json' }, "can't resolve reference"],
    ['an unknown keyword', { type: 'object', discriminator: { propertyName: 'kind' } }, 'unknown keyword'],
  ])('refuses %s with 400 before anything runs', async (_case, bad, message) => {
    const { token } = await newOrganization();

    const res = await run(token, 'json-bad', { output_format: { type: 'json_schema', schema: bad } });

    expect(res.status).toBe(400);
    expect(res.body.message).toContain(message);
    expect((await request('GET', '/sessions/json-bad', { token })).status).toBe(404);
  });
});
