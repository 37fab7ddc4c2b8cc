import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '#kit/log';
import { MaxStepsError, ProviderError } from '#functions/agent/errors';
import { runSteps, startAttempt, type AttemptState, type StepDeps } from '#functions/agent/loop';
import { createProvider } from '#functions/agent/providers/index';
import { createRedactor } from '#functions/agent/secrets';
import type { SpanEnd, SpanRecorder, SpanStart, Tool } from '#functions/agent/types';
import { answer, delay, hang, startFakeOpenAI, status, toolCall, toolCalls, type FakeOpenAIServer } from '../fakes/openai-server';

const KEY = 'sk-test-0123456789abcdefghij';
const MODEL = 'gpt-test';

interface RecordedSpan extends SpanStart {
  end?: SpanEnd;
}

/** Keeps spans in memory, and the order of start/end calls. */
function memoryRecorder() {
  const spans: RecordedSpan[] = [];
  const events: string[] = [];
  const recorder: SpanRecorder = {
    start: async (span) => {
      events.push(`start ${span.id}`);
      spans.push(structuredClone(span));
    },
    end: async (id, outcome) => {
      events.push(`end ${id}`);
      spans.find((span) => span.id === id)!.end = structuredClone(outcome);
    },
  };
  return { recorder, spans, events };
}

const add: Tool = {
  name: 'add',
  description: 'Adds two numbers.',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  call: async (args) => {
    const { a, b } = args as { a: number; b: number };
    return { sum: a + b };
  },
};

let server: FakeOpenAIServer;
let memory: ReturnType<typeof memoryRecorder>;
let checkpoints: AttemptState[];

function deps(overrides: Partial<StepDeps> = {}): StepDeps {
  return {
    provider: createProvider({ name: 'openai', url: server.url, credential: '{{secret:OPENAI}}' }, KEY),
    model: MODEL,
    tools: [add],
    maxSteps: 20,
    spans: memory.recorder,
    redactor: createRedactor(new Map([['OPENAI', KEY]])),
    deadline: Date.now() + 60_000,
    onStep: async (state) => void checkpoints.push(structuredClone(state)),
    signal: new AbortController().signal,
    ...overrides,
  };
}

const fresh = (userPrompt = 'Hello') => startAttempt({ sessionPosition: 1, attempt: 1, history: [], userPrompt });

/** What a trace lists about a span, without its payloads. */
const summary = (span: RecordedSpan) => ({ id: span.id, type: span.type, name: span.name, parent_id: span.parent_id, status: span.end?.status });

beforeEach(async () => {
  server = await startFakeOpenAI();
  memory = memoryRecorder();
  checkpoints = [];
});

afterEach(async () => {
  await server.close();
});

describe('runSteps', () => {
  it('records a plain answer as one model_call span with the request and response bodies', async () => {
    server.enqueue(answer('Hi there', { prompt_tokens: 21, completion_tokens: 4 }));
    const state = startAttempt({
      sessionPosition: 3,
      attempt: 2,
      systemPrompt: 'Be brief.',
      history: [
        { role: 'user', content: 'Earlier question' },
        { role: 'assistant', content: 'Earlier answer' },
      ],
      userPrompt: 'Hello',
    });

    const result = await runSteps(state, deps());

    expect(result.outcome).toBe('done');
    expect(result.state).toMatchObject({ answer: 'Hi there', steps: 1, next_seq: 2, usage: { input_tokens: 21, output_tokens: 4 } });
    expect(server.requests[0]!.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Earlier question' },
      { role: 'assistant', content: 'Earlier answer' },
      { role: 'user', content: 'Hello' },
    ]);
    expect(memory.spans).toHaveLength(1);
    const [span] = memory.spans;
    expect(span).toMatchObject({ id: 'inv-3.att-2.1', type: 'model_call', name: MODEL, parent_id: null });
    expect(span!.input).toEqual(server.requests[0]!.body);
    expect(span!.end).toMatchObject({ status: 'SUCCEEDED', usage: { input_tokens: 21, output_tokens: 4 } });
    expect(span!.end!.output).toMatchObject({ id: 'chatcmpl-1', choices: [{ message: { content: 'Hi there' } }] });
    expect(memory.events).toEqual(['start inv-3.att-2.1', 'end inv-3.att-2.1']);
  });

  it('runs a requested tool under a span whose parent is the model call, and gives the model its result', async () => {
    server.enqueue(toolCall('add', { a: 2, b: 3 }), answer('It is 5.'));
    let openWhileRunning: string[] = [];
    const watched: Tool = {
      ...add,
      call: async (args, context) => {
        openWhileRunning = memory.spans.filter((span) => !span.end).map((span) => span.id);
        return add.call(args, context);
      },
    };

    const { state } = await runSteps(fresh('What is 2 + 3?'), deps({ tools: [watched] }));

    expect(state).toMatchObject({ answer: 'It is 5.', steps: 2, next_seq: 4, usage: { input_tokens: 24, output_tokens: 6 } });
    expect(memory.spans.map(summary)).toEqual([
      { id: 'inv-1.att-1.1', type: 'model_call', name: MODEL, parent_id: null, status: 'SUCCEEDED' },
      { id: 'inv-1.att-1.2', type: 'tool_call', name: 'add', parent_id: 'inv-1.att-1.1', status: 'SUCCEEDED' },
      { id: 'inv-1.att-1.3', type: 'model_call', name: MODEL, parent_id: null, status: 'SUCCEEDED' },
    ]);
    expect(memory.spans[1]).toMatchObject({ input: { a: 2, b: 3 }, end: { output: { sum: 5 }, usage: null } });
    expect(openWhileRunning).toEqual(['inv-1.att-1.2']);
    expect(server.requests[0]!.body.tools).toEqual([{ type: 'function', function: { name: 'add', description: add.description, parameters: add.parameters } }]);
    expect(server.requests[1]!.body.messages.slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] },
      { role: 'tool', tool_call_id: 'call_1_1', content: '{"sum":5}' },
    ]);
  });

  it('runs several tool calls of one step in order, each a child of that model call', async () => {
    server.enqueue(toolCalls([{ name: 'add', args: { a: 1, b: 1 } }, { name: 'add', args: { a: 2, b: 2 } }]), answer('2 and 4'));

    await runSteps(fresh(), deps());

    expect(memory.spans.map((span) => [span.id, span.parent_id])).toEqual([
      ['inv-1.att-1.1', null],
      ['inv-1.att-1.2', 'inv-1.att-1.1'],
      ['inv-1.att-1.3', 'inv-1.att-1.1'],
      ['inv-1.att-1.4', null],
    ]);
    expect(server.requests[1]!.body.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1_1', content: '{"sum":2}' },
      { role: 'tool', tool_call_id: 'call_1_2', content: '{"sum":4}' },
    ]);
  });

  it.each([
    ['a tool that throws', toolCall('fail', {}), 'fail', 'disk full'],
    ['an unknown tool', toolCall('nope', { x: 1 }), 'nope', 'unknown tool "nope"; the available tools are: add, fail'],
    ['arguments that are not JSON', toolCall('add', '{"a": 1,'), 'add', 'the arguments are not valid JSON'],
  ])('turns %s into a FAILED tool span and an {error} result for the model', async (_case, reply, name, message) => {
    const fail: Tool = { name: 'fail', description: 'Fails.', parameters: { type: 'object' }, call: async () => Promise.reject(new Error('disk full')) };
    server.enqueue(reply, answer('Sorry.'));

    const { state } = await runSteps(fresh(), deps({ tools: [add, fail] }));

    expect(state.answer).toBe('Sorry.');
    expect(memory.spans[1]).toMatchObject({ type: 'tool_call', name, parent_id: 'inv-1.att-1.1', end: { status: 'FAILED', usage: null } });
    const output = memory.spans[1]!.end!.output as { error: string };
    expect(output.error).toContain(message);
    expect(server.requests[1]!.body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1_1', content: JSON.stringify(output) });
  });

  it('throws MaxStepsError when max_steps model calls bring no answer, with every span recorded', async () => {
    server.enqueue(toolCall('add', { a: 1, b: 1 }), toolCall('add', { a: 1, b: 2 }), answer('too late'));

    const run = runSteps(fresh(), deps({ maxSteps: 2 }));

    await expect(run).rejects.toThrow(MaxStepsError);
    await expect(run).rejects.toMatchObject({ name: 'MaxStepsError', maxSteps: 2 });
    expect(server.requests).toHaveLength(2);
    expect(memory.spans.map((span) => [span.id, span.type, span.end?.status])).toEqual([
      ['inv-1.att-1.1', 'model_call', 'SUCCEEDED'],
      ['inv-1.att-1.2', 'tool_call', 'SUCCEEDED'],
      ['inv-1.att-1.3', 'model_call', 'SUCCEEDED'],
      ['inv-1.att-1.4', 'tool_call', 'SUCCEEDED'],
    ]);
    expect(checkpoints.map((c) => c.steps)).toEqual([1, 2]);
  });

  it('stops at the deadline and resumes from the serialized state with the span numbering continuing', async () => {
    server.enqueue(delay(150, toolCall('add', { a: 20, b: 22 })), answer('42'));

    const first = await runSteps(fresh('What is 20 + 22?'), deps({ deadline: Date.now() + 50 }));

    expect(first.outcome).toBe('continue');
    expect(first.state).toMatchObject({ steps: 1, next_seq: 3, answer: null });
    const stored: AttemptState = JSON.parse(JSON.stringify(first.state));
    expect(stored).toEqual(first.state);

    // Another process: a new provider, a new recorder, the state from the checkpoint.
    const firstSpans = memory.spans;
    memory = memoryRecorder();
    const second = await runSteps(stored, deps());

    expect(second.outcome).toBe('done');
    expect(second.state).toMatchObject({ answer: '42', steps: 2, next_seq: 4, usage: { input_tokens: 24, output_tokens: 6 } });
    expect(firstSpans.map((span) => span.id)).toEqual(['inv-1.att-1.1', 'inv-1.att-1.2']);
    expect(memory.spans.map((span) => span.id)).toEqual(['inv-1.att-1.3']);
    expect(server.requests[1]!.body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1_1', content: '{"sum":42}' });
  });

  it('makes one step, and only one, when the deadline has passed already', async () => {
    server.enqueue(toolCall('add', { a: 1, b: 1 }), toolCall('add', { a: 2, b: 2 }));

    const result = await runSteps(fresh(), deps({ deadline: Date.now() - 1 }));

    // A call that returned `continue` without a step would be called again forever.
    expect(result.outcome).toBe('continue');
    expect(result.state.steps).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it('calls the checkpoint hook after every step, once that step’s spans have ended', async () => {
    server.enqueue(toolCall('add', { a: 1, b: 1 }), toolCall('add', { a: 2, b: 2 }), answer('done'));
    const endedAtCheckpoint: number[] = [];

    const { state } = await runSteps(
      fresh(),
      deps({
        onStep: async (s) => {
          checkpoints.push(structuredClone(s));
          endedAtCheckpoint.push(memory.spans.filter((span) => span.end).length);
        },
      }),
    );

    expect(checkpoints.map((c) => [c.steps, c.next_seq, c.answer])).toEqual([
      [1, 3, null],
      [2, 5, null],
      [3, 6, 'done'],
    ]);
    expect(endedAtCheckpoint).toEqual([2, 4, 5]);
    expect(checkpoints.at(-1)).toEqual(state);
  });

  it('retries a 500 inside the model call (one span, two requests)', async () => {
    server.enqueue(status(500), answer('recovered'));

    const { state } = await runSteps(fresh(), deps());

    expect(state.answer).toBe('recovered');
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.headers['x-stainless-retry-count']).toBe('1');
    expect(memory.spans.map(summary)).toEqual([{ id: 'inv-1.att-1.1', type: 'model_call', name: MODEL, parent_id: null, status: 'SUCCEEDED' }]);
  });

  it('throws a retryable ProviderError when every try fails, with a FAILED span and no key anywhere', async () => {
    const echoKey = () => status(500, { error: { message: `upstream refused ${KEY}` } }, { 'retry-after-ms': '10' });
    server.enqueue(echoKey(), echoKey(), echoKey());

    const error = await runSteps(fresh(), deps()).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ name: 'ProviderError', status: 500, retryable: true });
    expect((error as Error).message).not.toContain(KEY);
    expect(server.requests).toHaveLength(3);
    expect(memory.spans[0]).toMatchObject({ id: 'inv-1.att-1.1', end: { status: 'FAILED', usage: null } });
    expect(JSON.stringify(memory.spans)).not.toContain(KEY);
    expect(checkpoints).toEqual([]);
  });

  it('sends the credential only as the bearer token: spans, conversation, answer and logs are redacted', async () => {
    const leaky: Tool = { name: 'env', description: 'Prints the environment.', parameters: { type: 'object' }, call: async () => `OPENAI_API_KEY=${KEY}` };
    let brokenGot: unknown;
    const broken: Tool = {
      name: 'broken',
      description: 'Fails loudly.',
      parameters: { type: 'object' },
      call: async (args) => {
        brokenGot = args;
        throw new Error(`bad key ${KEY}`);
      },
    };
    server.enqueue(toolCalls([{ name: 'env', args: {} }, { name: 'broken', args: { key: KEY } }]), answer(`The key is ${KEY}`));
    const log = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() } satisfies Logger;

    const { state } = await runSteps(fresh(), deps({ tools: [leaky, broken], log }));

    expect(server.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
    expect(server.requests[1]!.body.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1_1', content: 'OPENAI_API_KEY=[REDACTED:OPENAI]' },
      { role: 'tool', tool_call_id: 'call_1_2', content: '{"error":"bad key [REDACTED:OPENAI]"}' },
    ]);
    expect(state.answer).toBe('The key is [REDACTED:OPENAI]');
    expect(memory.spans[2]!.input).toEqual({ key: '[REDACTED:OPENAI]' });
    expect(JSON.stringify(memory.spans)).not.toContain(KEY);
    expect(JSON.stringify(memory.spans)).toContain('[REDACTED:OPENAI]');
    expect(brokenGot).toEqual({ key: KEY });
    expect(JSON.stringify(checkpoints)).not.toContain(KEY);
    expect(JSON.stringify(server.requests[1]!.body)).not.toContain(KEY);
    expect(log.warn).toHaveBeenCalledWith('tool call failed', expect.objectContaining({ tool: 'broken', error: 'bad key [REDACTED:OPENAI]' }));
    expect(JSON.stringify([log.info.mock.calls, log.warn.mock.calls])).not.toContain(KEY);
  });

  it('keeps the conversation coherent and the span ids intact when a secret is very short', async () => {
    server.enqueue(toolCall('add', { a: 1, b: 2 }), answer('3'));

    await runSteps(fresh(), deps({ redactor: createRedactor(new Map([['PIN', '1']])) }));

    expect(server.requests[1]!.body.messages.slice(-2)).toMatchObject([
      { role: 'assistant', tool_calls: [{ id: 'call_[REDACTED:PIN]_[REDACTED:PIN]' }] },
      { role: 'tool', tool_call_id: 'call_[REDACTED:PIN]_[REDACTED:PIN]', content: '{"sum":3}' },
    ]);
    expect(memory.spans.map((span) => span.id)).toEqual(['inv-1.att-1.1', 'inv-1.att-1.2', 'inv-1.att-1.3']);
    // Numbers are not strings: the arguments keep them.
    expect(memory.spans[1]!.input).toEqual({ a: 1, b: 2 });
  });

  it('ends the attempt when a span cannot be recorded, instead of telling the model', async () => {
    server.enqueue(toolCall('add', { a: 1, b: 2 }), answer('3'));
    const failing: SpanRecorder = {
      start: memory.recorder.start,
      end: async (id, outcome) => {
        if (id === 'inv-1.att-1.2') throw new Error('table unavailable');
        await memory.recorder.end(id, outcome);
      },
    };

    await expect(runSteps(fresh(), deps({ spans: failing }))).rejects.toThrow('table unavailable');
    expect(server.requests).toHaveLength(1);
    expect(checkpoints).toEqual([]);
  });

  it('gives a rejected answer back to the model, which tries again within max_steps', async () => {
    const validateAnswer = (text: string) => (text.startsWith('{') ? undefined : 'Answer with a JSON object.');
    server.enqueue(answer('plain words'), answer('{"ok":true}'));

    const { state } = await runSteps(fresh(), deps({ validateAnswer }));

    expect(state).toMatchObject({ answer: '{"ok":true}', steps: 2 });
    expect(server.requests[1]!.body.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'plain words' },
      { role: 'user', content: 'Answer with a JSON object.' },
    ]);
    expect(memory.spans.map((span) => span.id)).toEqual(['inv-1.att-1.1', 'inv-1.att-1.2']);

    server.enqueue(answer('no'), answer('still no'));
    await expect(runSteps(fresh(), deps({ validateAnswer, maxSteps: 2 }))).rejects.toThrow(MaxStepsError);
  });

  it('stops when the signal aborts, ending the model span as FAILED', async () => {
    server.enqueue(hang());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);

    await expect(runSteps(fresh(), deps({ signal: controller.signal }))).rejects.toMatchObject({ name: 'AbortError' });
    expect(memory.spans[0]).toMatchObject({ id: 'inv-1.att-1.1', end: { status: 'FAILED' } });
  });

  it('returns at once for an attempt that already has its answer', async () => {
    const finished: AttemptState = { ...fresh(), answer: 'kept', steps: 1, next_seq: 2 };

    await expect(runSteps(finished, deps())).resolves.toEqual({ state: finished, outcome: 'done' });
    expect(server.requests).toHaveLength(0);
  });
});
