/**
 * Webhooks and the OTLP export through the service:
 * - delivery latency: an outcome's recorded time (the event's `timestamp`) to the webhook
 *   receiver having the request, and to the OTLP receiver having the trace (one clock);
 * - what delivery adds to the run path: a 1-step run request answered 200, with a webhook
 *   and an export configured and without, in alternating blocks (the outcome never waits
 *   on delivery, so the two should not differ beyond noise).
 */
import type { LocalCloud } from '#local/cloud';
import { answer, startFakeOpenAI } from '../test/fakes/openai-server';
import { startOtlpReceiver } from '../test/fakes/otlp-receiver';
import { startWebhookReceiver } from '../test/fakes/webhook-receiver';
import { figures } from './stats';

const RUNS = Number(process.env.BENCH_DELIVERY_RUNS ?? 30);
const BLOCK = 5;

/** Runs the benchmark against a started local cloud and prints its figures. */
export async function benchDeliveries(cloud: LocalCloud): Promise<void> {
  const [model, webhooks, otlp] = await Promise.all([startFakeOpenAI(), startWebhookReceiver(), startOtlpReceiver()]);
  try {
    const { token } = (await (await fetch(`${cloud.baseUrl}/local/sign-in`, { method: 'POST', body: JSON.stringify({ email: 'dev@localhost' }) })).json()) as { token: string };
    const headers = { authorization: `Bearer ${token}` };
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${cloud.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
      return res.status === 204 ? undefined : ((await res.json()) as Record<string, unknown>);
    };
    const agent = { model: { name: 'fake', provider: { name: 'openai', url: model.url } }, max_steps: 2 };
    const run = async (key: string) => {
      model.enqueue(answer('done'));
      const asked = performance.now();
      const res = await fetch(`${cloud.baseUrl}/sessions/bench-delivery-${key}?wait_timeout_seconds=30`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': key },
        body: JSON.stringify({ user_prompt: 'go', agent_name: 'bench-deliveries', agent }),
      });
      if (res.status !== 200) throw new Error(`run answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      const answered = Date.now();
      const took = performance.now() - asked;
      const trace = (await call('GET', `/traces/${key}?payloads=false`))!;
      return { took, outcomeToAnswer: answered - Date.parse(trace.ended_at as string) };
    };
    let webhookId: string | undefined;
    const configure = async (on: boolean) => {
      if (on) {
        webhookId = (await call('POST', '/webhooks', { url: webhooks.url }))!.id as string;
        await call('PUT', '/integrations/otlp', { endpoint: otlp.url });
      } else {
        if (webhookId) await call('DELETE', `/webhooks/${webhookId}`);
        await call('DELETE', '/integrations/otlp');
        webhookId = undefined;
      }
    };

    // Warm both paths (the deliver function's first environment included).
    await configure(true);
    for (let i = 0; i < 3; i++) await run(`warm-${Date.now()}-${i}`);
    await webhooks.waitFor(3);
    await configure(false);

    const withDelivery: { took: number; outcomeToAnswer: number }[] = [];
    const without: { took: number; outcomeToAnswer: number }[] = [];
    const keysWith: string[] = [];
    const keyOf = (body: string) => (JSON.parse(body) as { data: { invocation_key: string } }).data.invocation_key;
    for (let block = 0; block < (2 * RUNS) / BLOCK; block++) {
      const on = block % 2 === 1;
      await configure(on);
      for (let i = 0; i < BLOCK; i++) {
        const key = `delivery-${Date.now()}-${block}-${i}`;
        (on ? withDelivery : without).push(await run(key));
        if (on) keysWith.push(key);
      }
      // A deleted webhook stops its pending deliveries: let this block's arrive first.
      if (on) {
        const wanted = new Set(keysWith);
        await webhooks.waitFor(keysWith.length, { timeoutMs: 60_000, filter: (hook) => wanted.has(keyOf(hook.body)) });
        const exported = () => otlp.exports.filter((received) => received.spans.some((span) => wanted.has(String(span.attributes['agent_sessions.invocation_key'])))).length;
        for (const deadline = Date.now() + 60_000; exported() < keysWith.length; await new Promise((resolve) => setTimeout(resolve, 20))) {
          if (Date.now() > deadline) throw new Error(`expected ${keysWith.length} exports, got ${exported()}`);
        }
      }
    }
    await configure(false);

    const wanted = new Set(keysWith);
    const webhookLags = webhooks.received.filter((hook) => wanted.has(keyOf(hook.body))).map((hook) => hook.receivedAt - Date.parse(JSON.parse(hook.body).timestamp));

    const lag = figures(webhookLags);
    const runWith = figures(withDelivery.map((r) => r.took));
    const runWithout = figures(without.map((r) => r.took));
    const tailWith = figures(withDelivery.map((r) => r.outcomeToAnswer));
    const tailWithout = figures(without.map((r) => r.outcomeToAnswer));
    console.log(`\nWebhooks and OTLP export (${RUNS} runs with a webhook and an export, ${RUNS} without, alternating blocks of ${BLOCK})`);
    console.log(`  outcome recorded → webhook received:      p50 ${lag.p50.toFixed(0)} ms, p99 ${lag.p99.toFixed(0)} ms`);
    console.log(`  1-step run answered, without delivery:    p50 ${runWithout.p50.toFixed(1)} ms, p99 ${runWithout.p99.toFixed(1)} ms`);
    console.log(`  1-step run answered, webhook + export on: p50 ${runWith.p50.toFixed(1)} ms, p99 ${runWith.p99.toFixed(1)} ms`);
    console.log(`  outcome recorded → 200, without delivery:  p50 ${tailWithout.p50.toFixed(0)} ms, p99 ${tailWithout.p99.toFixed(0)} ms`);
    console.log(`  outcome recorded → 200, with delivery:     p50 ${tailWith.p50.toFixed(0)} ms, p99 ${tailWith.p99.toFixed(0)} ms`);
  } finally {
    await Promise.all([model.close(), webhooks.close(), otlp.stop()]);
  }
}
