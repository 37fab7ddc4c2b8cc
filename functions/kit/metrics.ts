/**
 * Metrics through Powertools for AWS Lambda, as CloudWatch Embedded Metric Format: each
 * one is a JSON log line that CloudWatch Logs turns into a metric on AWS (no API call, no
 * permission); locally they are log lines like any other. One line per observation, so
 * nothing waits for a flush at the end of an invocation.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, SERVICE_NAME, type MetricName } from './metric-names';

// One instance in single-metric mode: each metric is written at once and its dimensions
// cleared with it (a `singleMetric()` per observation would build a whole instance each time).
const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME, singleMetric: true });

function emit(name: MetricName, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number, dimensions?: Record<string, string>): void {
  for (const [key, dimension] of Object.entries(dimensions ?? {})) metrics.addDimension(key, dimension);
  metrics.addMetric(name, unit, value);
}

/** Counts `value` occurrences: under the service, and under `dimensions` too when given (alarms watch the first). */
export function count(name: MetricName, dimensions?: Record<string, string>, value = 1): void {
  emit(name, MetricUnit.Count, value);
  if (dimensions) emit(name, MetricUnit.Count, value, dimensions);
}

/** Records a duration in milliseconds. */
export function milliseconds(name: MetricName, value: number): void {
  emit(name, MetricUnit.Milliseconds, value);
}
