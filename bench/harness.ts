/**
 * The harness's overhead per step: the time between one model call's answer and the next
 * model call's request, which is everything the harness does outside the model (ending
 * the span, the tool call's span, the checkpoint, the progress stamp, the next request).
 * The fake model's tool calls name a tool the agent lacks, so the tool itself takes no
 * time and what is left is the harness. Measured twice: the full slice against the local
 * cloud (spans in DynamoDB Local and the S3 emulator), and the agent loop alone with
 * nothing recorded, so the difference is what recording costs.
 */
import { runSteps, startAttempt } from '#functions/agent/loop';
import { createOpenAIProvider } from '#functions/agent/providers/openai';
import { createRedactor } from '#functions/agent/secrets';
import { runAttemptSlice } from '#core/run-attempt';
import { sliceStore } from '#data/slice';
import { acceptanceStore } from '#data/acceptance';
import { acceptRun, recordRunRevision } from '#core/runs';
import { executionInput } from '#data/workflow';
import type { LocalCloud } from '#local/cloud';
import { answer, startFakeOpenAI, toolCall, type FakeOpenAIServer } from '../test/fakes/openai-server';
import { figures, printComparison } from './stats';

const STEPS = 20;
const RUNS = Number(process.env.BENCH_HARNESS_RUNS ?? 15);

/** Times the gaps between consecutive requests to `origin` while `work` runs. */
async function gapsBetweenCalls(origin: string, work: () => Promise<unknown>): Promise<number[]> {
  const original = globalThis.fetch;
  const calls: { start: number; end: number }[] = [];
  globalThis.fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(origin)) return original(input, init);
    const call = { start: performance.now(), end: 0 };
    const response = await original(input, init);
    // The SDK reads the body right after; the call ends when the body is in.
    const body = await response.arrayBuffer();
    call.end = performance.now();
    calls.push(call);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  try {
    await work();
  } finally {
    globalThis.fetch = original;
  }
  return calls.slice(1).map((call, i) => call.start - calls[i]!.end);
}

const script = (model: FakeOpenAIServer) =>
  model.enqueue(...Array.from({ length: STEPS - 1 }, () => toolCall('lookup', { q: 'x' })), answer('done'));

/** Runs the benchmark against a started local cloud (whose environment this process shares). */
export async function benchHarness(cloud: LocalCloud): Promise<void> {
  const model = await startFakeOpenAI();
  try {
    const signIn = await fetch(`${cloud.baseUrl}/local/sign-in`, { method: 'POST', body: JSON.stringify({ email: 'dev@localhost' }) });
    const { token } = (await signIn.json()) as { token: string };
    const whoami = await fetch(`${cloud.baseUrl}/whoami`, { headers: { authorization: `Bearer ${token}` } });
    const { organization_id: organizationId } = (await whoami.json()) as { organization_id: string };
    const agent = { model: { name: 'fake', provider: { name: 'openai' as const, url: model.url } }, max_steps: STEPS };

    const full: number[] = [];
    for (let run = 0; run < RUNS + 1; run++) {
      const invocationKey = `harness-${Date.now()}-${run}`;
      const { invocation } = await acceptRun(acceptanceStore(organizationId), { organizationId, sessionId: `harness-${run}`, invocationKey, rawBody: '{}', agentName: 'bench', agent, userPrompt: 'go' });
      await recordRunRevision(acceptanceStore(organizationId), { agentName: 'bench', agent }, invocation);
      script(model);
      const slice = { ...executionInput(organizationId, invocation), after: 0 };
      const gaps = await gapsBetweenCalls(model.origin, () => runAttemptSlice(sliceStore(organizationId), slice, 600_000));
      if (run > 0) full.push(...gaps); // the first run warms the clients up
    }

    const bare: number[] = [];
    const quiet = { start: async () => {}, end: async () => {} };
    for (let run = 0; run < RUNS + 1; run++) {
      script(model);
      const state = startAttempt({ sessionPosition: 1, attempt: 1, history: [], userPrompt: 'go' });
      const gaps = await gapsBetweenCalls(model.origin, () =>
        runSteps(state, {
          // Made inside: the SDK takes `fetch` when it is constructed.
          provider: createOpenAIProvider({ url: model.url }), model: 'fake', tools: [], maxSteps: STEPS, spans: quiet, redactor: createRedactor(new Map()),
          deadline: Infinity, onStep: async () => {}, signal: new AbortController().signal,
        }),
      );
      if (run > 0) bare.push(...gaps);
    }

    printComparison(`Harness overhead per step (time outside the model and tools; ${RUNS} runs × ${STEPS - 1} steps)`, [
      ['agent loop alone, nothing recorded', figures(bare)],
      ['full slice: spans, payloads, checkpoint', figures(full)],
    ], figures(bare));
  } finally {
    await model.close();
  }
}
