/** Executions of the invocation state machine. */
import { SFNClient, StartExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { config } from '#kit/config';
import { sha256 } from '#kit/ids';
import type { ExecutionInput } from '#functions/workflow/definition';
import type { Invocation } from '#core/model';
import type { RunEngine } from '#core/sessions';

const sfn = new SFNClient({});

/** What names an invocation's execution. */
export interface ExecutionRef {
  invocation_key: string;
  started_at: string;
}

/**
 * The execution name of an invocation: derived from it, so a retried start is
 * idempotent; hashed, since keys are long and free-form and names are 80 of [A-Za-z0-9_-].
 * The acceptance time is part of it because a deleted session frees its invocation keys,
 * and a closed execution's name cannot start again.
 */
export function executionName(organizationId: string, invocation: ExecutionRef): string {
  return `inv-${sha256(`${organizationId}\n${invocation.invocation_key}\n${invocation.started_at}`).slice(0, 64)}`;
}

function executionArn(name: string): string {
  const arn = config.stateMachineArn;
  return `${arn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/** What an invocation's execution starts with: its ids and the facts of its acceptance. */
export function executionInput(organizationId: string, invocation: Invocation): ExecutionInput {
  const { invocation_key, session_id, session_position, agent_name, agent_revision, started_at, user_cursor } = invocation;
  return { organization_id: organizationId, invocation_key, session_id, session_position, agent_name, agent_revision, started_at, user_cursor };
}

/** Starts the invocation's execution; a second start of a running or ended one changes nothing. */
export async function startExecution(organizationId: string, invocation: Invocation): Promise<void> {
  try {
    await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: config.stateMachineArn,
        name: executionName(organizationId, invocation),
        input: JSON.stringify(executionInput(organizationId, invocation)),
      }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ExecutionAlreadyExists')) throw error;
  }
}

/** Stops the invocation's execution if it is running. */
export async function stopExecution(organizationId: string, invocation: ExecutionRef, cause: string): Promise<void> {
  try {
    await sfn.send(
      new StopExecutionCommand({
        executionArn: executionArn(executionName(organizationId, invocation)),
        error: 'Interrupted',
        cause,
      }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ExecutionDoesNotExist')) throw error;
  }
}

/** The executions of `organizationId`'s invocations (`core/sessions.ts` declares the engine). */
export function runEngine(organizationId: string): RunEngine {
  return {
    start: (invocation) => startExecution(organizationId, invocation),
    stop: (invocation, cause) => stopExecution(organizationId, invocation, cause),
  };
}
