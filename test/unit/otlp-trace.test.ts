/**
 * The OTLP trace of an invocation (CONTRACT.md, "OTLP export"), decoded as a collector
 * would: by the fake receiver's protobuf decoder, written from the official schema, not by
 * the library that encoded it. The last block checks the receiver itself over HTTP.
 */
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { otlpSpanId, otlpTraceId, otlpTraceRequest, type OtlpTraceInput } from '#core/otlp-trace';
import { decodeOtlpTraces, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../fakes/otlp-receiver';

const KIND = { INTERNAL: 1, CLIENT: 3 };
const STATUS = { UNSET: 0, OK: 1, ERROR: 2 };
const ORG = 'org-1';
const KEY = 'inv-key-1';

/** Nanoseconds since the epoch of an ISO time. */
const nanos = (iso: string) => BigInt(Date.parse(iso)) * 1_000_000n;

/** A succeeded one-attempt run: a model call that asked for a tool, the tool call, a final model call. */
function run(overrides: Partial<OtlpTraceInput> = {}): OtlpTraceInput {
  return {
    organizationId: ORG,
    invocation: {
      invocation_key: KEY,
      session_id: 'ses-1',
      agent_name: 'helper',
      agent_revision: 'rev-3',
      status: 'SUCCEEDED',
      started_at: '2026-03-01T10:00:00.000Z',
      ended_at: '2026-03-01T10:00:05.500Z',
      model: { provider: 'openai', name: 'gpt-test' },
    },
    attempts: [{ number: 1, status: 'SUCCEEDED', started_at: '2026-03-01T10:00:00.010Z', ended_at: '2026-03-01T10:00:05.400Z' }],
    spans: [
      { id: 'inv-1.att-1.1', type: 'model_call', name: 'gpt-test', parent_id: null, attempt: 1, status: 'SUCCEEDED', started_at: '2026-03-01T10:00:00.100Z', ended_at: '2026-03-01T10:00:01.250Z', usage: { input_tokens: 120, output_tokens: 30 } },
      { id: 'inv-1.att-1.2', type: 'tool_call', name: 'web_search', parent_id: 'inv-1.att-1.1', attempt: 1, status: 'FAILED', started_at: '2026-03-01T10:00:01.300Z', ended_at: '2026-03-01T10:00:02.000Z', usage: null },
      { id: 'inv-1.att-1.3', type: 'model_call', name: 'gpt-test', parent_id: null, attempt: 1, status: 'SUCCEEDED', started_at: '2026-03-01T10:00:02.100Z', ended_at: '2026-03-01T10:00:05.000Z', usage: null },
    ],
    payloads: false,
    ...overrides,
  };
}

function decoded(input: OtlpTraceInput) {
  return decodeOtlpTraces(otlpTraceRequest(input), 'application/x-protobuf');
}

function byName(spans: ReceivedSpan[], name: string): ReceivedSpan[] {
  return spans.filter((span) => span.name === name);
}

describe('otlpTraceRequest', () => {
  it('builds one trace: the root, each model call under it, each tool call under its model call', () => {
    const { spans } = decoded(run());

    expect(spans.map((span) => span.name)).toEqual(['invoke_agent helper', 'chat gpt-test', 'execute_tool web_search', 'chat gpt-test']);
    const [root, chat, tool, finalChat] = spans as [ReceivedSpan, ReceivedSpan, ReceivedSpan, ReceivedSpan];
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([otlpTraceId(ORG, KEY)]));
    expect(root.spanId).toBe(otlpSpanId(ORG, KEY, null));
    expect(root.parentSpanId).toBe('');
    expect(chat.spanId).toBe(otlpSpanId(ORG, KEY, 'inv-1.att-1.1'));
    expect(chat.parentSpanId).toBe(root.spanId);
    expect(tool.spanId).toBe(otlpSpanId(ORG, KEY, 'inv-1.att-1.2'));
    expect(tool.parentSpanId).toBe(chat.spanId);
    expect(finalChat.parentSpanId).toBe(root.spanId);
    expect([root.kind, chat.kind, tool.kind]).toEqual([KIND.INTERNAL, KIND.CLIENT, KIND.INTERNAL]);
  });

  it('names the service and the instrumentation scope', () => {
    const { resourceAttributes, spans } = decoded(run());

    expect(resourceAttributes).toEqual({ 'service.name': 'agent-sessions' });
    expect(new Set(spans.map((span) => span.scope))).toEqual(new Set(['agent-sessions']));
  });

  it('carries the GenAI and agent_sessions attributes the contract lists', () => {
    const [root, chat, tool, finalChat] = decoded(run()).spans;

    expect(root!.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'helper',
      'gen_ai.conversation.id': 'ses-1',
      'agent_sessions.invocation_key': KEY,
      'agent_sessions.revision': 'rev-3',
    });
    expect(chat!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'agent_sessions.attempt': 1,
      'agent_sessions.superseded': false,
    });
    expect(tool!.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'web_search',
      'agent_sessions.attempt': 1,
      'agent_sessions.superseded': false,
    });
    // No usage recorded: zero, not absent.
    expect(finalChat!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 0, 'gen_ai.usage.output_tokens': 0 });
  });

  it.each([
    ['anthropic', 'anthropic'],
    ['bedrock', 'aws.bedrock'],
    ['openai', 'openai'],
  ])('names the provider %s by its well-known name %s', (provider, expected) => {
    const input = run();
    input.invocation.model = { provider, name: 'gpt-test' };

    const chat = byName(decoded(input).spans, 'chat gpt-test')[0]!;

    expect(chat.attributes['gen_ai.provider.name']).toBe(expected);
  });

  it('leaves the provider out when the invocation does not record its model', () => {
    const input = run();
    delete input.invocation.model;

    const chat = byName(decoded(input).spans, 'chat gpt-test')[0]!;

    expect(chat.attributes).not.toHaveProperty('gen_ai.provider.name');
    expect(chat.attributes['gen_ai.request.model']).toBe('gpt-test');
  });

  it('mirrors our times to the nanosecond and our statuses', () => {
    const input = run();

    const [root, chat, tool] = decoded(input).spans;

    expect(root!.startTimeUnixNano).toBe(nanos('2026-03-01T10:00:00.000Z'));
    expect(root!.endTimeUnixNano).toBe(nanos('2026-03-01T10:00:05.500Z'));
    expect(chat!.startTimeUnixNano).toBe(nanos('2026-03-01T10:00:00.100Z'));
    expect(chat!.endTimeUnixNano).toBe(nanos('2026-03-01T10:00:01.250Z'));
    expect(root!.status).toEqual({ code: STATUS.OK, message: '' });
    expect(chat!.status).toEqual({ code: STATUS.OK, message: '' });
    expect(tool!.status.code).toBe(STATUS.ERROR);
    expect(root!.attributes).not.toHaveProperty('error.type');
  });

  it('marks a failed invocation’s root ERROR with the failure’s message and its kind in error.type', () => {
    const input = run();
    input.invocation.status = 'FAILED';
    input.invocation.failure = { kind: 'no_progress', message: 'the agent made no progress for 3 attempts' };

    const root = decoded(input).spans[0]!;

    expect(root.status).toEqual({ code: STATUS.ERROR, message: 'the agent made no progress for 3 attempts' });
    expect(root.attributes['error.type']).toBe('no_progress');
  });

  it('exports the spans of every attempt, the earlier ones marked superseded', () => {
    const input = run({
      attempts: [
        { number: 1, status: 'FAILED', started_at: '2026-03-01T10:00:00.010Z', ended_at: '2026-03-01T10:00:02.000Z' },
        { number: 2, status: 'SUCCEEDED', started_at: '2026-03-01T10:00:02.500Z', ended_at: '2026-03-01T10:00:05.400Z' },
      ],
      spans: [
        { id: 'inv-1.att-1.1', type: 'model_call', name: 'gpt-test', parent_id: null, attempt: 1, status: 'SUCCEEDED', started_at: '2026-03-01T10:00:00.100Z', ended_at: '2026-03-01T10:00:01.000Z', usage: { input_tokens: 10, output_tokens: 2 } },
        { id: 'inv-1.att-1.2', type: 'tool_call', name: 'run_command', parent_id: 'inv-1.att-1.1', attempt: 1, status: 'FAILED', started_at: '2026-03-01T10:00:01.100Z', ended_at: '2026-03-01T10:00:01.900Z', usage: null },
        { id: 'inv-1.att-2.1', type: 'model_call', name: 'gpt-test', parent_id: null, attempt: 2, status: 'SUCCEEDED', started_at: '2026-03-01T10:00:03.000Z', ended_at: '2026-03-01T10:00:04.000Z', usage: { input_tokens: 11, output_tokens: 3 } },
        { id: 'inv-1.att-2.2', type: 'tool_call', name: 'run_command', parent_id: 'inv-1.att-2.1', attempt: 2, status: 'SUCCEEDED', started_at: '2026-03-01T10:00:04.100Z', ended_at: '2026-03-01T10:00:04.900Z', usage: null },
      ],
    });

    const [, ...children] = decoded(input).spans;

    expect(children.map((span) => [span.name, span.attributes['agent_sessions.attempt'], span.attributes['agent_sessions.superseded']])).toEqual([
      ['chat gpt-test', 1, true],
      ['execute_tool run_command', 1, true],
      ['chat gpt-test', 2, false],
      ['execute_tool run_command', 2, false],
    ]);
    // Each tool call stays under the model call of its own attempt.
    expect(children[1]!.parentSpanId).toBe(children[0]!.spanId);
    expect(children[3]!.parentSpanId).toBe(children[2]!.spanId);
  });

  it('ends a span cut off with its attempt at that attempt’s end, ERROR', () => {
    const input = run({
      attempts: [
        { number: 1, status: 'FAILED', started_at: '2026-03-01T10:00:00.010Z', ended_at: '2026-03-01T10:00:03.333Z' },
        { number: 2, status: 'SUCCEEDED', started_at: '2026-03-01T10:00:03.500Z', ended_at: '2026-03-01T10:00:05.400Z' },
      ],
      spans: [
        { id: 'inv-1.att-1.1', type: 'model_call', name: 'gpt-test', parent_id: null, attempt: 1, status: 'RUNNING', started_at: '2026-03-01T10:00:00.100Z', usage: null },
        { id: 'inv-1.att-2.1', type: 'model_call', name: 'gpt-test', parent_id: null, attempt: 2, status: 'SUCCEEDED', started_at: '2026-03-01T10:00:04.000Z', ended_at: '2026-03-01T10:00:05.000Z', usage: null },
      ],
    });

    const [, cutOff, latest] = decoded(input).spans;

    expect(cutOff!.endTimeUnixNano).toBe(nanos('2026-03-01T10:00:03.333Z'));
    expect(cutOff!.status.code).toBe(STATUS.ERROR);
    expect(cutOff!.attributes['agent_sessions.superseded']).toBe(true);
    expect(latest!.status.code).toBe(STATUS.OK);
  });

  it('ends a cut-off span at the invocation’s end when its attempt has none', () => {
    const input = run({
      attempts: [{ number: 1, status: 'RUNNING', started_at: '2026-03-01T10:00:00.010Z' }],
      spans: [{ id: 'inv-1.att-1.1', type: 'tool_call', name: 'web_search', parent_id: null, attempt: 1, status: 'RUNNING', started_at: '2026-03-01T10:00:00.100Z', usage: null }],
    });
    input.invocation.status = 'FAILED';
    input.invocation.failure = { kind: 'interrupted', message: 'stopped' };

    const [root, tool] = decoded(input).spans;

    expect(tool!.endTimeUnixNano).toBe(nanos('2026-03-01T10:00:05.500Z'));
    expect(tool!.status.code).toBe(STATUS.ERROR);
    // A tool call without a model call above it hangs from the root.
    expect(tool!.parentSpanId).toBe(root!.spanId);
  });

  it('puts a span whose parent is not in the trace under the root', () => {
    const input = run();
    input.spans[1]!.parent_id = 'inv-1.att-9.9';

    const [root, , tool] = decoded(input).spans;

    expect(tool!.parentSpanId).toBe(root!.spanId);
  });

  it('never carries payloads when they are not exported', () => {
    const input = run();
    for (const span of input.spans) Object.assign(span, { input: '{"messages":[]}', output: '{"content":"hi"}' });

    const { spans } = decoded(input);

    for (const span of spans) {
      expect(span.attributes).not.toHaveProperty('gen_ai.input.messages');
      expect(span.attributes).not.toHaveProperty('gen_ai.output.messages');
    }
  });

  it('carries payloads when exported, cut to 64 KiB without splitting a character', () => {
    // 65,535 ASCII bytes, then '€' (3 bytes) straddling the 65,536-byte bound.
    const long = 'a'.repeat(65_535) + '€' + 'tail';
    const exact = 'é'.repeat(32_768); // exactly 65,536 bytes: kept whole
    const input = run({ payloads: true });
    Object.assign(input.spans[0]!, { input: long, output: '{"content":"done"}' });
    Object.assign(input.spans[1]!, { input: exact });

    const [root, chat, tool, finalChat] = decoded(input).spans;

    expect(chat!.attributes['gen_ai.input.messages']).toBe('a'.repeat(65_535));
    expect(chat!.attributes['gen_ai.output.messages']).toBe('{"content":"done"}');
    expect(tool!.attributes['gen_ai.input.messages']).toBe(exact);
    expect(tool!.attributes).not.toHaveProperty('gen_ai.output.messages');
    expect(finalChat!.attributes).not.toHaveProperty('gen_ai.input.messages');
    expect(root!.attributes).not.toHaveProperty('gen_ai.input.messages');
  });

  it('cuts a 4-byte character whole too', () => {
    const input = run({ payloads: true });
    Object.assign(input.spans[0]!, { output: 'b'.repeat(65_534) + '😀' });

    const chat = decoded(input).spans[1]!;

    expect(chat.attributes['gen_ai.output.messages']).toBe('b'.repeat(65_534));
  });
});

describe('OTLP ids', () => {
  it('are the same on every export of the invocation', () => {
    const first = otlpTraceRequest(run());
    const second = otlpTraceRequest(run());

    expect(Buffer.from(second)).toEqual(Buffer.from(first));
    const ids = (body: Uint8Array) => decodeOtlpTraces(body, 'application/x-protobuf').spans.map((span) => [span.traceId, span.spanId, span.parentSpanId]);
    expect(ids(second)).toEqual(ids(first));
  });

  it('differ between organizations and between invocations', () => {
    expect(otlpTraceId('org-2', KEY)).not.toBe(otlpTraceId(ORG, KEY));
    expect(otlpTraceId(ORG, 'inv-key-2')).not.toBe(otlpTraceId(ORG, KEY));
    expect(otlpSpanId('org-2', KEY, null)).not.toBe(otlpSpanId(ORG, KEY, null));
    expect(otlpSpanId(ORG, KEY, 'inv-1.att-1.1')).not.toBe(otlpSpanId(ORG, KEY, null));
    const other = decoded(run({ organizationId: 'org-2' }));
    expect(other.spans[0]!.traceId).toBe(otlpTraceId('org-2', KEY));
  });

  it('are 32 and 16 lowercase hex digits, never zero, and distinct within a trace', () => {
    const { spans } = decoded(run());

    for (const span of spans) {
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(span.traceId).not.toMatch(/^0+$/);
      expect(span.spanId).not.toMatch(/^0+$/);
    }
    expect(new Set(spans.map((span) => span.spanId)).size).toBe(spans.length);
  });
});

describe('the fake OTLP receiver', () => {
  let receivers: OtlpReceiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.map((receiver) => receiver.stop()));
    receivers = [];
  });
  const start = async (port?: number) => {
    const receiver = await startOtlpReceiver(port === undefined ? {} : { port });
    receivers.push(receiver);
    return receiver;
  };
  const post = (url: string, body: Uint8Array, headers: Record<string, string> = { 'content-type': 'application/x-protobuf' }) => fetch(url, { method: 'POST', headers, body });

  it('records an export with its headers, answers scripted failures, and comes back on the same port', async () => {
    const receiver = await start();
    const body = otlpTraceRequest(run());
    receiver.failNext(1, 503);

    const refused = await post(receiver.url, body, { 'content-type': 'application/x-protobuf', authorization: 'Bearer t' });
    const accepted = await post(receiver.url, gzipSync(body), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip', authorization: 'Bearer t' });
    await receiver.waitForExports(1);

    expect([refused.status, accepted.status]).toEqual([503, 200]);
    expect(receiver.requests.map((request) => request.status)).toEqual([503, 200]);
    expect(receiver.exports).toHaveLength(1);
    expect(receiver.exports[0]!.headers.authorization).toBe('Bearer t');
    expect(Buffer.from(receiver.exports[0]!.raw)).toEqual(Buffer.from(body));
    expect(receiver.exports[0]!.spans).toHaveLength(4);

    await receiver.stop();
    await expect(post(receiver.url, body)).rejects.toThrow();
    const back = await start(receiver.port);
    back.answer(429);
    expect((await post(back.url, body)).status).toBe(429);
    back.answer(200);
    expect((await post(back.url, body)).status).toBe(200);
    expect(back.exports).toHaveLength(1);
  });

  it('decodes OTLP JSON bodies and refuses other media types', async () => {
    const receiver = await start();
    const json = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'elsewhere' } }] },
          scopeSpans: [
            {
              scope: { name: 'other' },
              spans: [
                {
                  traceId: '5B8EFFF798038103D269B633813FC60C',
                  spanId: 'EEE19B7EC3C1B174',
                  parentSpanId: '',
                  name: 'op',
                  kind: 2,
                  startTimeUnixNano: '1544712660000000000',
                  endTimeUnixNano: '1544712661000000000',
                  attributes: [
                    { key: 'n', value: { intValue: '42' } },
                    { key: 'ok', value: { boolValue: true } },
                  ],
                  status: { code: 2, message: 'bad' },
                },
              ],
            },
          ],
        },
      ],
    };

    const accepted = await post(receiver.url, Buffer.from(JSON.stringify(json)), { 'content-type': 'application/json; charset=utf-8' });
    const refused = await post(receiver.url, Buffer.from('x'), { 'content-type': 'text/plain' });

    expect([accepted.status, refused.status]).toEqual([200, 415]);
    expect(receiver.exports[0]!.resourceAttributes).toEqual({ 'service.name': 'elsewhere' });
    expect(receiver.exports[0]!.spans).toEqual([
      {
        traceId: '5b8efff798038103d269b633813fc60c',
        spanId: 'eee19b7ec3c1b174',
        parentSpanId: '',
        name: 'op',
        kind: 2,
        startTimeUnixNano: 1544712660000000000n,
        endTimeUnixNano: 1544712661000000000n,
        status: { code: 2, message: 'bad' },
        attributes: { n: 42, ok: true },
        scope: 'other',
      },
    ]);
  });
});
