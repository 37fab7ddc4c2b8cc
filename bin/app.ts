/** The CDK app: `npx cdk deploy -c founderEmails=you@example.com` (context keys: lib/service-stack.ts). */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ServiceStack } from '../lib/service-stack';

const app = new App();
ServiceStack.fromContext(app);
// cdk-nag 3 runs as a synthesis validation plugin: an unacknowledged error fails `cdk synth`.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
