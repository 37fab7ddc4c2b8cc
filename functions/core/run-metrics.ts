/** The run's metrics, measured around the harness's seams rather than inside it. */
import type { SpanRecorder } from '#functions/agent/types';
import { METRIC } from '#kit/metric-names';
import { count, milliseconds } from '#kit/metrics';

/** The same recorder, emitting each model call's latency (from its recorded start to its end) and tokens. */
export function measuredSpans<T extends SpanRecorder>(spans: T): T {
  const calling = new Map<string, number>();
  return {
    ...spans,
    async start(span) {
      await spans.start(span);
      if (span.type === 'model_call') calling.set(span.id, performance.now());
    },
    async end(id, outcome) {
      const since = calling.get(id);
      if (since !== undefined) {
        calling.delete(id);
        milliseconds(METRIC.modelCallLatency, performance.now() - since);
        if (outcome.usage) {
          count(METRIC.tokensInput, undefined, outcome.usage.input_tokens);
          count(METRIC.tokensOutput, undefined, outcome.usage.output_tokens);
        }
      }
      await spans.end(id, outcome);
    },
  };
}

/** A clock of steps: each call emits the time since the last one (or since the clock started). */
export function stepClock(): () => void {
  let last = performance.now();
  return () => {
    const now = performance.now();
    milliseconds(METRIC.stepLatency, now - last);
    last = now;
  };
}
