/**
 * The OTLP export end to end (CONTRACT.md, "Sending what happened where users already
 * look"): every status of /integrations/otlp, and every finished invocation exported as
 * one OTLP/HTTP protobuf trace, decoded by a receiver on 127.0.0.1: the span tree of every
 * attempt with the GenAI attributes, superseded spans marked, usage, statuses, header
 * secrets resolved only on the wire, payloads redacted, and an endpoint that is down for a
 * while receiving the export once it is back. A service of its own, with one-second
 * attempts, so a run takes two attempts quickly.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloudProcess, type CloudProcess } from '#local/cloud-process';
import { answer, hang, startFakeOpenAI, status, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedExport, type ReceivedSpan } from '../fakes/otlp-receiver';
import { request as send, type RequestOptions } from './support';

const MODEL_KEY = `sk-otlp-model-canary-${Date.now().toString(36)}`;
const EXPORT_TOKEN = `otlp-header-canary-${Date.now().toString(36)}`;

let dir: string;
let cloud: CloudProcess;
let model: FakeOpenAIServer;
let receiver: OtlpReceiver;
let token: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-sessions-otlp-'));
  [model, receiver] = await Promise.all([startFakeOpenAI(), startOtlpReceiver()]);
  cloud = await startCloudProcess({
    port: 0,
    dataDir: null,
    env: { FOUNDER_EMAILS: 'dev@localhost', ATTEMPT_TIMEOUT_SECONDS: '1', MAX_ATTEMPTS: '2' },
    logFile: join(dir, 'service.log'),
  });
  token = (await send('POST', '/local/sign-in', { base: cloud.baseUrl, body: { email: 'dev@localhost' } })).body.token;
  await request('POST', '/secrets', { body: { name: 'MODEL_KEY', value: MODEL_KEY } });
  await request('POST', '/secrets', { body: { name: 'EXPORT_TOKEN', value: EXPORT_TOKEN } });
}, 90_000);

afterAll(async () => {
  await cloud?.stop();
  await Promise.all([model?.close(), receiver?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

function request(method: string, path: string, options: RequestOptions = {}) {
  return send(method, path, { base: cloud.baseUrl, token, ...options });
}

const run = (session: string, key: string, prompt = 'Go') =>
  request('POST', `/sessions/${session}?wait_timeout_seconds=60`, {
    headers: { 'idempotency-key': key },
    body: {
      user_prompt: prompt,
      agent_name: 'exported',
      agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url, credential: '{{secret:MODEL_KEY}}' } }, max_steps: 5 },
    },
  });

/** The export of one invocation, once it arrived. */
async function exportOf(key: string, timeoutMs = 15_000): Promise<ReceivedExport> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(50)) {
    const found = receiver.exports.find((received) => received.spans.some((span) => span.attributes['agent_sessions.invocation_key'] === key));
    if (found) return found;
  }
  throw new Error(`no export of ${key} arrived`);
}

const nanos = (iso: string) => BigInt(Date.parse(iso)) * 1_000_000n;

describe('/integrations/otlp', () => {
  it('stores, shows and deletes the settings, references unresolved', async () => {
    expect((await request('GET', '/integrations/otlp')).status).toBe(404);
    const settings = { endpoint: 'https://otlp.example.com/api/public/otel/v1/traces', headers: { Authorization: 'Basic {{secret:EXPORT_TOKEN}}' } };
    const put = await request('PUT', '/integrations/otlp', { body: settings });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ ...settings, payloads: false });
    expect((await request('GET', '/integrations/otlp')).body).toEqual(put.body);
    const replaced = await request('PUT', '/integrations/otlp', { body: { endpoint: receiver.url, payloads: true } });
    expect(replaced.body).toEqual({ endpoint: receiver.url, payloads: true });
    expect((await request('DELETE', '/integrations/otlp')).status).toBe(204);
    expect((await request('DELETE', '/integrations/otlp')).status).toBe(204);
    expect((await request('GET', '/integrations/otlp')).status).toBe(404);
    expect((await request('GET', '/integrations/otlp', { token: undefined })).status).toBe(401);
  });

  it.each([
    ['an endpoint not ending in /v1/traces', { endpoint: 'https://otlp.example.com/v1/logs' }],
    ['an endpoint with a query', { endpoint: 'https://otlp.example.com/v1/traces?x=1' }],
    ['an http endpoint on a public host', { endpoint: 'http://otlp.example.com/v1/traces' }],
    ['the metadata service', { endpoint: 'https://169.254.169.254/v1/traces' }],
    ['the IPv6 metadata address', { endpoint: 'https://[fd00:ec2::254]/v1/traces' }],
    ['a malformed secret reference', { endpoint: 'https://otlp.example.com/v1/traces', headers: { authorization: 'Bearer {{secret:bad name}}' } }],
    ['an unknown secret', { endpoint: 'https://otlp.example.com/v1/traces', headers: { authorization: 'Bearer {{secret:NO_SUCH}}' } }],
    ['a header name that is no token', { endpoint: 'https://otlp.example.com/v1/traces', headers: { 'bad header': 'x' } }],
    ['a non-string header value', { endpoint: 'https://otlp.example.com/v1/traces', headers: { 'x-n': 1 } }],
    ['payloads that are no boolean', { endpoint: 'https://otlp.example.com/v1/traces', payloads: 'yes' }],
    ['an unknown field', { endpoint: 'https://otlp.example.com/v1/traces', protocol: 'grpc' }],
  ])('refuses %s with 400 and stores nothing', async (_, body) => {
    const refused = await request('PUT', '/integrations/otlp', { body });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toEqual(expect.any(String));
    expect((await request('GET', '/integrations/otlp')).status).toBe(404);
  });
});

describe('export', () => {
  it('exports a two-attempt run as one trace: the span tree, GenAI attributes, superseded spans, usage, header secrets on the wire only', async () => {
    await request('PUT', '/integrations/otlp', {
      body: { endpoint: receiver.url, headers: { authorization: 'Bearer {{secret:EXPORT_TOKEN}}', 'x-team': 'agents' }, payloads: true },
    });
    // Attempt 1: a tool call, then a model call that hangs past the 1 s attempt timeout; attempt 2 answers.
    model.enqueue(toolCall('lookup', { q: 1 }), hang(), answer('answered on the second attempt'));

    const ran = await run('otlp-1', 'otlp-two-attempts', `My key is ${MODEL_KEY}; look it up.`);
    expect(ran.status).toBe(200);
    const received = await exportOf('otlp-two-attempts');
    const trace = (await request('GET', '/traces/otlp-two-attempts?attempts=all')).body;

    expect(received.contentType).toBe('application/x-protobuf');
    expect(received.headers.authorization).toBe(`Bearer ${EXPORT_TOKEN}`);
    expect(received.headers['x-team']).toBe('agents');
    expect(received.resourceAttributes['service.name']).toBe('agent-sessions');

    const spans = received.spans;
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    const root = spans.find((span) => span.parentSpanId === '')!;
    expect(root.name).toBe('invoke_agent exported');
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'exported',
      'gen_ai.conversation.id': 'otlp-1',
      'agent_sessions.invocation_key': 'otlp-two-attempts',
      'agent_sessions.revision': trace.agent_revision,
    });
    expect(root.status.code).toBe(1);
    expect(root.startTimeUnixNano).toBe(nanos(trace.started_at));
    expect(root.endTimeUnixNano).toBe(nanos(trace.ended_at));

    // One exported span per recorded span of every attempt, in our tree.
    expect(trace.attempts.map((a: { status: string }) => a.status)).toEqual(['FAILED', 'SUCCEEDED']);
    expect(spans).toHaveLength(trace.spans.length + 1);
    const byOurId = new Map<string, ReceivedSpan>();
    // A span of the first attempt shows as superseded in our trace.
    const attemptOf = (ours: { superseded?: boolean }) => (ours.superseded ? 1 : 2);
    for (const ours of trace.spans) {
      const theirs = spans.filter((span) => span !== root && span.startTimeUnixNano === nanos(ours.started_at) && span.attributes['agent_sessions.attempt'] === attemptOf(ours) && span.name.endsWith(ours.name));
      expect(theirs).toHaveLength(1);
      byOurId.set(ours.id, theirs[0]!);
    }
    for (const ours of trace.spans) {
      const span = byOurId.get(ours.id)!;
      expect(span.attributes['agent_sessions.superseded']).toBe(attemptOf(ours) === 1);
      if (ours.type === 'model_call') {
        expect(span.name).toBe('chat gpt-fake');
        expect(span.parentSpanId).toBe(root.spanId);
        expect(span.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-fake' });
        expect(span.attributes['gen_ai.usage.input_tokens']).toBe(ours.usage?.input_tokens ?? 0);
        expect(span.attributes['gen_ai.usage.output_tokens']).toBe(ours.usage?.output_tokens ?? 0);
        // Payloads as recorded: redacted of the run's secrets.
        expect(span.attributes['gen_ai.input.messages']).toEqual(expect.stringContaining('[REDACTED:MODEL_KEY]'));
      } else {
        expect(span.name).toBe('execute_tool lookup');
        expect(span.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' });
        expect(span.parentSpanId).toBe(byOurId.get(ours.parent_id)!.spanId);
      }
      expect(span.status.code).toBe(ours.status === 'SUCCEEDED' ? 1 : 2);
      expect(span.endTimeUnixNano).toBe(nanos(ours.ended_at));
    }
    // The hung call was cut off with its attempt: FAILED when that attempt ended.
    const cut = trace.spans.find((ours: { status: string; type: string }) => ours.type === 'model_call' && ours.status !== 'SUCCEEDED');
    expect(cut).toMatchObject({ status: 'FAILED', superseded: true });
    expect(byOurId.get(cut.id)!.status.code).toBe(2);
    expect(byOurId.get(cut.id)!.endTimeUnixNano).toBe(nanos(cut.ended_at));
    expect(Date.parse(cut.ended_at)).toBeLessThanOrEqual(Date.parse(trace.attempts[0].ended_at));

    // No secret in what was sent (but the header itself) or in anything recorded.
    expect(received.raw.includes(MODEL_KEY)).toBe(false);
    expect(received.raw.includes(EXPORT_TOKEN)).toBe(false);
    const log = await readFile(join(dir, 'service.log'), 'utf8');
    expect(log).not.toContain(MODEL_KEY);
    expect(log).not.toContain(EXPORT_TOKEN);
  });

  it('exports a failed invocation with an ERROR root, and no payloads unless asked', async () => {
    await request('PUT', '/integrations/otlp', { body: { endpoint: receiver.url } });
    model.enqueue(status(400, { error: { message: 'no such model', type: 'invalid_request_error' } }));

    const ran = await run('otlp-2', 'otlp-failed');
    expect(ran.status).toBe(502);
    const received = await exportOf('otlp-failed');
    const trace = (await request('GET', '/traces/otlp-failed')).body;

    const root = received.spans.find((span) => span.parentSpanId === '')!;
    expect(root.status).toEqual({ code: 2, message: trace.failure.message });
    expect(root.attributes['error.type']).toBe(trace.failure.kind);
    for (const span of received.spans) {
      expect(span.attributes['gen_ai.input.messages']).toBeUndefined();
      expect(span.attributes['gen_ai.output.messages']).toBeUndefined();
    }
  });

  it('never slows a run while the endpoint is down, and exports once it is back', async () => {
    await request('PUT', '/integrations/otlp', { body: { endpoint: receiver.url } });
    const { port } = receiver;
    await receiver.stop();
    model.enqueue(answer('while the collector is down'));

    const ran = await run('otlp-3', 'otlp-down');
    expect(ran.status).toBe(200);
    // Down for a while (the first tries find nothing listening), then back on the same port.
    await sleep(2500);
    receiver = await startOtlpReceiver({ port });
    const received = await exportOf('otlp-down', 20_000);

    expect(received.spans.find((span) => span.parentSpanId === '')!.status.code).toBe(1);
  });

  it('names the same trace and spans when an export is repeated', async () => {
    await request('PUT', '/integrations/otlp', { body: { endpoint: receiver.url } });
    // The first try is answered 503: the retry sends the same trace again.
    receiver.failNext(1, 503);
    model.enqueue(answer('twice'));
    expect((await run('otlp-4', 'otlp-repeat')).status).toBe(200);

    const received = await exportOf('otlp-repeat');
    const tries = receiver.requests.filter((sent) => sent.status === 503);
    expect(tries.length).toBeGreaterThanOrEqual(1);
    const ids = received.spans.map((span) => `${span.traceId}/${span.spanId}`).sort();
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('stops exporting once the settings are deleted', async () => {
    await request('PUT', '/integrations/otlp', { body: { endpoint: receiver.url } });
    receiver.answer(500);
    model.enqueue(answer('never exported'));
    expect((await run('otlp-5', 'otlp-deleted')).status).toBe(200);
    for (const deadline = Date.now() + 10_000; receiver.requests.filter((r) => r.status === 500).length === 0 && Date.now() < deadline; ) await sleep(50);
    expect((await request('DELETE', '/integrations/otlp')).status).toBe(204);
    const failed = receiver.requests.filter((r) => r.status === 500).length;
    await sleep(7500);
    expect(receiver.requests.filter((r) => r.status === 500).length).toBeLessThanOrEqual(failed + 1);
    receiver.answer(200);
  });
});
