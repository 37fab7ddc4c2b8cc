/** Synthesizes the service stack the way `cdk synth` does, minus bundling, for template assertions. */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { ServiceStack } from '../../lib/service-stack';

// The CLI passes cdk.json's feature flags to the app; a test app has to be given them.
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};

/** Context of a synthesis without bundling: cdk.json's flags plus `overrides` (values as `-c` gives them). */
export function testContext(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...overrides };
}

/** The app, its service stack and the stack's template, built from `context` as `bin/app.ts` builds them. */
export function synthesize(overrides: Record<string, unknown> = {}): { app: App; stack: ServiceStack; template: Template } {
  const app = new App({ context: testContext(overrides) });
  const stack = ServiceStack.fromContext(app);
  return { app, stack, template: Template.fromStack(stack) };
}
