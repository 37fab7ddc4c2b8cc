import { fileURLToPath } from 'node:url';
import { Duration, Validations } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, TenancyConfig, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { SANDBOX_FUNCTION_TIMEOUT_SECONDS } from '#contracts/sandbox';
import { ENV } from '#kit/env';
import type { ServiceFunction } from './service-function';
import { sandboxBundling } from './bundling';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * The function the terminal tool runs commands in (`functions/sandbox/run-command.ts`).
 * What runs there is whatever the model writes, so its role may do nothing at all: no
 * managed policy, no statement, not even CloudWatch Logs or X-Ray, so the credentials
 * Lambda hands the function are worth nothing to a command that finds them (a command runs
 * as the same user as the runtime, so it can read them). The function writes no logs on
 * purpose (a command's output goes back to the caller, which records it in the trace);
 * Lambda's attempts to create its log group simply fail.
 *
 * It runs in tenant isolation mode, each invocation a tenant (RunSteps invokes it with the
 * invocation's workspace digest as `TenantId`): an execution environment then only ever
 * serves one invocation's commands, so a process a command leaves behind (even one that
 * cleared its environment and left its process group) never sees another invocation's
 * files or output, and the workspace lasts as long as the environment. Its snapshot, for a
 * new environment, goes through presigned URLs RunSteps signs for that invocation's object
 * only, not through a grant on the role, which every tenant's commands could use.
 */
export class SandboxFunction extends NodejsFunction {
  /** The function's own role, always present (the base class types it as optional). */
  declare readonly role: Role;

  constructor(scope: Construct, id: string) {
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Terminal tool sandbox: deliberately without any permission',
    });
    super(scope, id, {
      entry: `${projectRoot}functions/sandbox/run-command.ts`,
      projectRoot,
      depsLockFilePath: `${projectRoot}package-lock.json`,
      description: 'Terminal tool sandbox: runs one command, with no permissions',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      // Commands are shell work, not compute; more memory would buy CPU nobody asked for.
      memorySize: 512,
      // Past the longest command a configuration may allow, so the handler itself kills a
      // command that runs out of time and answers, rather than Lambda ending the function.
      timeout: Duration.seconds(SANDBOX_FUNCTION_TIMEOUT_SECONDS),
      // Active tracing would need X-Ray permissions on the role.
      tracing: Tracing.DISABLED,
      tenancyConfig: TenancyConfig.PER_TENANT,
      role,
      bundling: {
        ...sandboxBundling,
        format: OutputFormat.ESM,
        mainFields: [...sandboxBundling.mainFields],
        externalModules: [...sandboxBundling.externalModules],
      },
    });

    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason: 'Functions target nodejs22.x on purpose: the contract pins it, and the local cloud runs the same code on Node 20/22.',
    });
  }
}

/** Lets `fn` invoke the sandbox function, that function only, and tells it the function's name. */
export function bindSandbox(fn: ServiceFunction, sandbox: SandboxFunction): void {
  // The unqualified ARN only: the tool invokes $LATEST by name, never a version or alias.
  fn.addToRolePolicy(new PolicyStatement({ effect: Effect.ALLOW, actions: ['lambda:InvokeFunction'], resources: [sandbox.functionArn] }));
  fn.addEnvironment(ENV.sandboxFunctionName, sandbox.functionName);
}
