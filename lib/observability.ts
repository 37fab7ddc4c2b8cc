import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { FAILURE_KINDS, METRIC, METRICS_NAMESPACE, SERVICE_NAME, type MetricName } from '#kit/metric-names';

const PERIOD = Duration.minutes(5);

/** Properties of {@link Observability}. */
export interface ObservabilityProps {
  /** Failed invocations in five minutes that raise the failed-runs alarm. */
  readonly failedRunsThreshold: number;
}

/**
 * What a deployer watches: a CloudWatch dashboard of the metrics the functions emit as
 * Embedded Metric Format log lines (`functions/kit/metrics.ts`, names in
 * `functions/kit/metric-names.ts`), and alarms on failed runs and on 5xx answers. The
 * alarms have no action: subscribe what you use (SNS, chat) to them in the console or a
 * stack of your own.
 */
export class Observability extends Construct {
  readonly dashboard: Dashboard;
  readonly failedRunsAlarm: Alarm;
  readonly serverErrorsAlarm: Alarm;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);

    const failed = serviceMetric(METRIC.invocationsFailed, 'Sum');
    const serverErrors = serviceMetric(METRIC.http5xx, 'Sum');

    this.failedRunsAlarm = new Alarm(this, 'FailedRuns', {
      alarmDescription: `At least ${props.failedRunsThreshold} invocations ended FAILED within 5 minutes (any kind; the dashboard splits them).`,
      metric: failed,
      threshold: props.failedRunsThreshold,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.serverErrorsAlarm = new Alarm(this, 'ServerErrors', {
      alarmDescription: 'The HTTP API answered 500 within 5 minutes: an unexpected fault, logged with its request id.',
      metric: serverErrors,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const byRoute = (name: MetricName, label: string) =>
      new MathExpression({
        expression: `SEARCH('{${METRICS_NAMESPACE},service,route} MetricName="${name}"', 'Sum', ${PERIOD.toSeconds()})`,
        label,
        period: PERIOD,
      });

    this.dashboard = new Dashboard(this, 'Dashboard', {
      widgets: [
        [
          graph('Invocations', [
            serviceMetric(METRIC.invocationsAccepted, 'Sum', 'accepted'),
            serviceMetric(METRIC.invocationsSucceeded, 'Sum', 'succeeded'),
            failed.with({ label: 'failed' }),
          ]),
          graph(
            'Failed invocations by kind',
            FAILURE_KINDS.map((kind) => serviceMetric(METRIC.invocationsFailed, 'Sum', kind, { kind })),
          ),
          graph('Attempts started', [serviceMetric(METRIC.attemptsStarted, 'Sum', 'attempts')]),
        ],
        [
          graph('Tokens', [serviceMetric(METRIC.tokensInput, 'Sum', 'in'), serviceMetric(METRIC.tokensOutput, 'Sum', 'out')]),
          graph('Model call latency (ms)', [
            serviceMetric(METRIC.modelCallLatency, 'p50', 'p50'),
            serviceMetric(METRIC.modelCallLatency, 'p99', 'p99'),
          ]),
          graph('Step latency (ms)', [serviceMetric(METRIC.stepLatency, 'p50', 'p50'), serviceMetric(METRIC.stepLatency, 'p99', 'p99')]),
        ],
        [
          graph('HTTP 4xx by route', [byRoute(METRIC.http4xx, '4xx')]),
          graph('HTTP 5xx by route', [byRoute(METRIC.http5xx, '5xx')]),
        ],
      ],
    });
  }
}

function serviceMetric(name: MetricName, statistic: string, label?: string, dimensions: Record<string, string> = {}): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { service: SERVICE_NAME, ...dimensions },
    statistic,
    period: PERIOD,
    ...(label ? { label } : {}),
  });
}

function graph(title: string, metrics: IMetric[]): GraphWidget {
  return new GraphWidget({ title, left: metrics, width: 8, height: 6 });
}
