/** Executions of the invocation state machine. */
import { SFNClient, StartExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { config } from '#core/config';
import { sha256 } from '#core/ids';

const sfn = new SFNClient({});

/**
 * The execution name of an invocation: derived from it, so a retried start is
 * idempotent; hashed, since keys are long and free-form and names are 80 of [A-Za-z0-9_-].
 */
export function executionName(organizationId: string, invocationKey: string): string {
  return `inv-${sha256(`${organizationId}\n${invocationKey}`).slice(0, 64)}`;
}

function executionArn(name: string): string {
  const arn = config.stateMachineArn;
  return `${arn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/** Starts the invocation's execution; a second start of a running or ended one changes nothing. */
export async function startExecution(organizationId: string, invocationKey: string): Promise<void> {
  try {
    await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: config.stateMachineArn,
        name: executionName(organizationId, invocationKey),
        input: JSON.stringify({ organization_id: organizationId, invocation_key: invocationKey }),
      }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ExecutionAlreadyExists')) throw error;
  }
}

/** Stops the invocation's execution if it is running. */
export async function stopExecution(organizationId: string, invocationKey: string, cause: string): Promise<void> {
  try {
    await sfn.send(
      new StopExecutionCommand({
        executionArn: executionArn(executionName(organizationId, invocationKey)),
        error: 'SessionDeleted',
        cause,
      }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ExecutionDoesNotExist')) throw error;
  }
}
