/**
 * Sessions side by side: eight sessions each running one 2-second model call at once,
 * against one such run alone, on a cold pool (a cloud just started, nothing run yet) and
 * on a warm one. Starts a cloud of its own, so the cold figure is cold.
 */
import './quiet';
import { startLocalCloud } from '#local/cloud';
import { answer, delay, startFakeOpenAI } from '../test/fakes/openai-server';

const SESSIONS = 8;
const MODEL_MS = 2_000;

/** Prints wall times of one run alone and of eight at once, cold and warm. */
async function benchParallel(): Promise<void> {
  const cloud = await startLocalCloud({ port: 0, dataDir: null });
  const model = await startFakeOpenAI();
  try {
    const { token } = (await (await fetch(`${cloud.baseUrl}/local/sign-in`, { method: 'POST', body: JSON.stringify({ email: 'dev@localhost' }) })).json()) as { token: string };
    const agent = { model: { name: 'fake', provider: { name: 'openai', url: model.url } } };
    let sequence = 0;
    const run = async (session: string) => {
      const res = await fetch(`${cloud.baseUrl}/sessions/${session}?wait_timeout_seconds=60`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': `parallel-${sequence++}` },
        body: JSON.stringify({ user_prompt: 'ping', agent_name: 'bench', agent }),
      });
      if (res.status !== 200) throw new Error(`the run answered ${res.status}: ${await res.text()}`);
    };
    const timed = async (sessions: number) => {
      model.enqueue(...Array.from({ length: sessions }, () => delay(MODEL_MS, answer('pong'))));
      const start = performance.now();
      await Promise.all(Array.from({ length: sessions }, (_, s) => run(`side-by-side-${s}`)));
      return performance.now() - start;
    };
    const cold = await timed(SESSIONS);
    const alone: number[] = [];
    for (let i = 0; i < 3; i++) alone.push(await timed(1));
    const warm: number[] = [];
    for (let i = 0; i < 3; i++) warm.push(await timed(SESSIONS));
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const one = median(alone);
    console.log(`\n${SESSIONS} sessions each running a ${MODEL_MS / 1000} s model call at once (wall time, accept to the last answer)`);
    console.log(`  one alone (median of 3):           ${(one / 1000).toFixed(2)} s`);
    console.log(`  ${SESSIONS} at once, cold pool:            ${(cold / 1000).toFixed(2)} s  (${(cold / one).toFixed(2)}× one alone)`);
    console.log(`  ${SESSIONS} at once, warm pool (median of 3): ${(median(warm) / 1000).toFixed(2)} s  (${(median(warm) / one).toFixed(2)}× one alone)`);
  } finally {
    await model.close();
    await cloud.stop();
  }
}

await benchParallel();
