/**
 * The `limits` of an agent configuration, for one invocation: `max_tokens` bounds input
 * plus output tokens over all its attempts, `max_duration_seconds` runs from acceptance.
 * Both are checked before every model call and every attempt; the duration also ends calls
 * in flight (the slice's watchdog aborts them at the deadline).
 */
import type { AgentConfig } from '#contracts/agent';
import { LimitReachedError } from './errors';
import type { Usage } from './model';

export interface InvocationLimits {
  /** Epoch ms at which the invocation's time is up; undefined without `max_duration_seconds`. */
  deadline: number | undefined;
  /** Throws LimitReachedError when a limit is reached, given this attempt's usage so far. */
  check(current: Usage): void;
}

const tokens = (usage: Usage) => usage.input_tokens + usage.output_tokens;

/** The limits of `agent` for an invocation accepted at `startedAt`, its earlier attempts having used `earlier`. */
export function invocationLimits(agent: AgentConfig, startedAt: string, earlier: Usage): InvocationLimits {
  const { max_tokens: maxTokens, max_duration_seconds: maxSeconds } = agent.limits ?? {};
  const deadline = maxSeconds === undefined ? undefined : Date.parse(startedAt) + maxSeconds * 1000;
  return {
    deadline,
    check(current) {
      if (deadline !== undefined && Date.now() >= deadline) throw durationReached(maxSeconds!);
      const used = tokens(earlier) + tokens(current);
      if (maxTokens !== undefined && used >= maxTokens) {
        throw new LimitReachedError(`the invocation reached its limit max_tokens (${maxTokens}): ${used} tokens used`);
      }
    },
  };
}

/** The error of an invocation whose `max_duration_seconds` passed. */
export function durationReached(maxSeconds: number): LimitReachedError {
  return new LimitReachedError(`the invocation reached its limit max_duration_seconds (${maxSeconds} s)`);
}
