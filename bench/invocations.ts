/**
 * The run path's overhead: POST /sessions/{id} from accept to SUCCEEDED, with a fake
 * model that answers at once, for 1 and for 10 model steps, and throughput with 8
 * sessions running at once; each against the same model calls made directly, so the
 * ratio is what the service adds (transactions, state machine, child-process tasks,
 * checkpoints, spans and payloads).
 */
import OpenAI from 'openai';
import type { LocalCloud } from '#local/cloud';
import { answer, startFakeOpenAI, toolCall, type FakeOpenAIServer } from '../test/fakes/openai-server';
import { figures, printComparison, sample } from './stats';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const CONCURRENT_SESSIONS = 8;
const RUNS_PER_SESSION = Number(process.env.BENCH_RUNS_PER_SESSION ?? 5);

async function json(res: Response): Promise<Record<string, unknown>> {
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${res.url} answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/** Runs the benchmark against a started local cloud and prints its figures. */
export async function benchInvocations(cloud: LocalCloud): Promise<void> {
  const model = await startFakeOpenAI();
  try {
    const { token } = (await json(
      await fetch(`${cloud.baseUrl}/local/sign-in`, { method: 'POST', body: JSON.stringify({ email: 'dev@localhost' }) }),
    )) as { token: string };
    const agent = { model: { name: 'fake', provider: { name: 'openai', url: model.url } }, max_steps: 20 };
    let sequence = 0;
    const invoke = async (session: string) => {
      await json(
        await fetch(`${cloud.baseUrl}/sessions/${session}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'idempotency-key': `bench-${sequence++}` },
          body: JSON.stringify({ user_prompt: 'ping', agent_name: 'bench', agent }),
        }),
      );
    };
    const sdk = new OpenAI({ apiKey: 'unused', baseURL: model.url, maxRetries: 0 });
    const bareCall = () => sdk.chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: 'ping' }] });
    const script = (steps: number) => model.enqueue(...Array.from({ length: steps - 1 }, () => toolCall('lookup', { q: 'x' })), answer('pong'));

    const oneStep = await sample(RUNS, () => (script(1), invoke('one-step')), 3);
    const bareOne = await sample(RUNS, () => (script(1), bareCall()), 3);
    const tenSteps = await sample(Math.ceil(RUNS / 2), () => (script(10), invoke('ten-steps')), 2);
    const bareTen = await sample(Math.ceil(RUNS / 2), async () => {
      script(10);
      for (let i = 0; i < 10; i++) await bareCall();
    }, 2);
    printComparison('Invocation, accept to SUCCEEDED (fake model answering at once)', [
      ['1 model call, directly', figures(bareOne)],
      ['1-step invocation through the service', figures(oneStep)],
    ], figures(bareOne));
    printComparison('', [
      ['10 model calls, directly', figures(bareTen)],
      ['10-step invocation through the service', figures(tenSteps)],
    ], figures(bareTen));

    const throughput = async (work: (session: number) => Promise<unknown>) => {
      // One untimed round first: Lambda's (and the local cloud's) sandboxes start cold once.
      await Promise.all(Array.from({ length: CONCURRENT_SESSIONS }, (_, s) => work(s)));
      const start = performance.now();
      await Promise.all(Array.from({ length: CONCURRENT_SESSIONS }, async (_, s) => {
        for (let i = 0; i < RUNS_PER_SESSION; i++) await work(s);
      }));
      return (CONCURRENT_SESSIONS * RUNS_PER_SESSION) / ((performance.now() - start) / 1000);
    };
    const service = await throughput((s) => invoke(`parallel-${s}`));
    const bare = await throughput(() => bareCall());
    console.log(`\nThroughput, ${CONCURRENT_SESSIONS} sessions at once, ${RUNS_PER_SESSION} 1-step invocations each`);
    console.log(`  through the service: ${service.toFixed(1)} invocations/s`);
    console.log(`  bare model calls:    ${bare.toFixed(1)} calls/s   (service ${(bare / service).toFixed(1)}× slower)`);
  } finally {
    await (model as FakeOpenAIServer).close();
  }
}
