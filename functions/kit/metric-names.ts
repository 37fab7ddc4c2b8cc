/**
 * The service's CloudWatch metrics, declared once: `metrics.ts` emits them (as Embedded
 * Metric Format log lines), the CDK dashboard and alarms (`lib/observability.ts`) read them.
 * Every metric carries the `service` dimension; the ones listed with a dimension are also
 * emitted under `service` plus that dimension.
 */
export const METRICS_NAMESPACE = 'AgentSessions';
export const SERVICE_NAME = 'agent-sessions';

export const METRIC = {
  /** A run request started an invocation (re-attaches are not counted). */
  invocationsAccepted: 'invocations_accepted',
  invocationsSucceeded: 'invocations_succeeded',
  /** Dimension `kind`: crash, no_progress, interrupted, internal. */
  invocationsFailed: 'invocations_failed',
  attemptsStarted: 'attempts_started',
  /** Tokens of each model call, in and out. */
  tokensInput: 'tokens_input',
  tokensOutput: 'tokens_output',
  /** Milliseconds of one model call, tries included. */
  modelCallLatency: 'model_call_latency',
  /** Milliseconds of one step: a model call and the tool calls it asked for, recorded. */
  stepLatency: 'step_latency',
  /** Answers of the HTTP API; dimension `route` (`METHOD /path`). */
  http4xx: 'http_4xx',
  http5xx: 'http_5xx',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/** The failure kinds an invocation ends with (CONTRACT.md). */
export const FAILURE_KINDS = ['crash', 'no_progress', 'interrupted', 'internal'] as const;
