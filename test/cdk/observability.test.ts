import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { FAILURE_KINDS, METRIC, METRICS_NAMESPACE, SERVICE_NAME } from '#kit/metric-names';
import { synthesize } from './synth';

const serviceDimension = [{ Name: 'service', Value: SERVICE_NAME }];

describe('observability', () => {
  const { template } = synthesize({ founderEmails: 'founder@example.com' });

  it('alarms on failed runs and on 5xx answers, on the metrics the functions emit', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: METRICS_NAMESPACE,
      MetricName: METRIC.invocationsFailed,
      Dimensions: serviceDimension,
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: METRICS_NAMESPACE,
      MetricName: METRIC.http5xx,
      Dimensions: serviceDimension,
      Threshold: 1,
    });
    expect(Object.keys(template.findResources('AWS::CloudWatch::Alarm'))).toHaveLength(2);
  });

  it('takes the failed-runs threshold from the context', () => {
    const { template: custom } = synthesize({ founderEmails: 'founder@example.com', failedRunsAlarmThreshold: '5' });

    custom.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: METRIC.invocationsFailed, Threshold: 5 });
  });

  it('draws every metric on one dashboard, failures by kind and errors by route, and names it in an output', () => {
    const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard!.Properties.DashboardBody);

    for (const name of Object.values(METRIC)) expect(body).toContain(name);
    for (const kind of FAILURE_KINDS) expect(body).toContain(`\\"kind\\",\\"${kind}\\"`);
    expect(body).toContain(`SEARCH('{${METRICS_NAMESPACE},service,route} MetricName=\\\\\\"${METRIC.http5xx}\\\\\\"'`);
    template.hasOutput('DashboardName', { Value: Match.anyValue() });
  });
});
