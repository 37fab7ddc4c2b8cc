/**
 * Following and cancelling a run through the service:
 * - how long after a span ends a follower long-polling GET /traces/{key}/events receives
 *   its `span_ended` (the span's recorded `ended_at` to the page's arrival; one clock);
 * - how long from POST /traces/{key}/cancel until the session accepts a new key (the
 *   cancel's answer, then a run request answered 202).
 */
import type { LocalCloud } from '#local/cloud';
import { answer, delay, hang, startFakeOpenAI, toolCall } from '../test/fakes/openai-server';
import { figures } from './stats';

const RUNS = Number(process.env.BENCH_FOLLOW_RUNS ?? 5);
const STEPS = 8;
const CANCELS = Number(process.env.BENCH_CANCEL_RUNS ?? 15);

interface Event {
  seq: number;
  type: string;
  span?: { ended_at: string | null };
}

/** Runs the benchmark against a started local cloud and prints its figures. */
export async function benchFollow(cloud: LocalCloud): Promise<void> {
  const model = await startFakeOpenAI();
  try {
    const { token } = (await (await fetch(`${cloud.baseUrl}/local/sign-in`, { method: 'POST', body: JSON.stringify({ email: 'dev@localhost' }) })).json()) as { token: string };
    const headers = { authorization: `Bearer ${token}` };
    const agent = { model: { name: 'fake', provider: { name: 'openai', url: model.url } }, max_steps: STEPS + 1 };
    const start = (sessionId: string, key: string) =>
      fetch(`${cloud.baseUrl}/sessions/${sessionId}?wait_timeout_seconds=0`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': key },
        body: JSON.stringify({ user_prompt: 'go', agent_name: 'bench-follow', agent }),
      }).then(async (res) => {
        if (res.status !== 202) throw new Error(`run answered ${res.status}: ${await res.text()}`);
      });
    const page = async (key: string, after?: string) => {
      const query = new URLSearchParams({ wait_seconds: '20', ...(after ? { after } : {}) });
      const res = await fetch(`${cloud.baseUrl}/traces/${key}/events?${query}`, { headers });
      if (res.status !== 200) throw new Error(`events answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { events: Event[]; next_cursor?: string };
    };

    // Model calls of 150 ms between instant tool calls: spans end while the follower waits.
    const lags: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const key = `follow-${Date.now()}-${run}`;
      model.enqueue(...Array.from({ length: STEPS - 1 }, () => delay(150, toolCall('lookup', { q: run }))), delay(150, answer('done')));
      await start(`follow-${run}`, key);
      let after: string | undefined;
      do {
        const { events, next_cursor } = await page(key, after);
        const arrived = Date.now();
        for (const event of events) {
          if (event.type === 'span_ended' && event.span?.ended_at) lags.push(arrived - Date.parse(event.span.ended_at));
        }
        after = next_cursor;
      } while (after);
    }

    // Cancel a run waiting on a model that never answers, then run the session again.
    const cancels: number[] = [];
    for (let run = 0; run < CANCELS; run++) {
      model.enqueue(hang());
      const key = `cancel-${Date.now()}-${run}`;
      await start(`cancel-${run}`, key);
      for (let seen = false; !seen; ) seen = (await page(key)).events.some((event) => event.type === 'span_started');
      const asked = performance.now();
      const cancelled = await fetch(`${cloud.baseUrl}/traces/${key}/cancel`, { method: 'POST', headers });
      if (cancelled.status !== 200) throw new Error(`cancel answered ${cancelled.status}: ${await cancelled.text()} (run ${run})`);
      model.enqueue(answer('again'));
      await start(`cancel-${run}`, `${key}-next`);
      cancels.push(performance.now() - asked);
      // The next run takes its answer before another run is scripted.
      for (let after: string | undefined = (await page(`${key}-next`)).next_cursor; after; ) after = (await page(`${key}-next`, after)).next_cursor;
    }

    const lag = figures(lags);
    const cancel = figures(cancels);
    console.log(`\nFollowing and cancelling (${RUNS} runs × ${STEPS * 2 - 1} spans followed; ${CANCELS} cancels)`);
    console.log(`  span ended → long-polling follower has it: p50 ${lag.p50.toFixed(0)} ms, p99 ${lag.p99.toFixed(0)} ms (${lags.length} spans)`);
    console.log(`  cancel asked → session accepts a new key:  p50 ${cancel.p50.toFixed(0)} ms, p99 ${cancel.p99.toFixed(0)} ms`);
  } finally {
    await model.close();
  }
}
