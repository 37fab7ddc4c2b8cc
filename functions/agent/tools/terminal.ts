/**
 * The terminal tool: the model runs `bash -c` commands in a working directory of its
 * invocation, which starts empty and keeps its files from one command to the next. The
 * commands run in the sandbox function (`functions/sandbox/run-command.ts`), invoked
 * through Lambda: a function whose role may do nothing and whose commands see no
 * credential, so nothing the model runs can reach the service's resources.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { AgentConfig } from '#contracts/agent';
import { MAX_COMMAND_BYTES, MAX_OUTPUT_BYTES, type SandboxRequest, type SandboxResult } from '#contracts/sandbox';
import { config } from '#core/config';
import { sha256 } from '#core/ids';
import type { ToolboxContext, ToolSet } from '#core/toolbox';
import type { Tool } from '../types';

const lambda = new LambdaClient({});

/** `tools.terminal.timeout_seconds` when the configuration does not say (CONTRACT.md). */
export const DEFAULT_TIMEOUT_SECONDS = 30;

/**
 * The workspace of an invocation: a digest, so the sandbox is never handed a path, and
 * two organizations using the same invocation key never share a directory.
 */
export function workspaceOf(organizationId: string, invocationKey: string): string {
  return sha256(JSON.stringify([organizationId, invocationKey]));
}

/** The terminal tool, when the configuration asks for it. */
export async function terminalTools(agent: AgentConfig, context: ToolboxContext): Promise<ToolSet | undefined> {
  const options = agent.tools?.terminal;
  if (!options) return undefined;
  // Acceptance refuses a configuration asking for the tool where there is none (assertRunnable).
  const functionName = config.sandboxFunctionName;
  if (!functionName) throw new Error('this deployment does not offer the terminal tool');
  return {
    tools: [
      terminalTool({
        functionName,
        workspace: workspaceOf(context.organizationId, context.invocation.invocation_key),
        timeoutSeconds: options.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS,
      }),
    ],
  };
}

interface TerminalOptions {
  functionName: string;
  workspace: string;
  timeoutSeconds: number;
}

function terminalTool(options: TerminalOptions): Tool {
  // Whether a command of this invocation ran in this slice: a workspace created after one
  // did means its files were cleared, which the model must be told.
  let ran = false;
  return {
    name: 'terminal',
    description:
      `Runs a bash command (bash -c) in a working directory of this task, which starts empty; files you create there stay for later commands. ` +
      `There is no input (stdin is closed). A command running longer than ${options.timeoutSeconds} s is killed, with everything it started. ` +
      `The result shows the exit code, then at most ${MAX_OUTPUT_BYTES} bytes each of stdout and stderr.`,
    parameters: {
      type: 'object',
      properties: { command: { type: 'string', description: 'The bash command to run.' } },
      required: ['command'],
      additionalProperties: false,
    },
    async call(args, context) {
      const request: SandboxRequest = { workspace: options.workspace, command: commandOf(args), timeout_seconds: options.timeoutSeconds };
      const answer = await lambda.send(
        new InvokeCommand({ FunctionName: options.functionName, Payload: Buffer.from(JSON.stringify(request)) }),
        { abortSignal: context.signal },
      );
      const payload = Buffer.from(answer.Payload ?? []).toString('utf8');
      if (answer.FunctionError) throw new Error(`the sandbox could not run the command: ${functionErrorOf(payload)}`);
      const result = JSON.parse(payload) as SandboxResult;
      const reset = ran && result.workspace_created;
      ran = true;
      return `${reset ? 'note: the working directory was reset before this command; files from earlier commands are gone\n' : ''}${render(result, options.timeoutSeconds)}`;
    },
  };
}

function commandOf(args: unknown): string {
  const command = (args as { command?: unknown } | null)?.command;
  if (typeof command !== 'string' || command.trim() === '') throw new Error('"command" must be a non-empty string');
  if (command.includes('\0')) throw new Error('"command" must not contain NUL characters');
  if (Buffer.byteLength(command) > MAX_COMMAND_BYTES) {
    throw new Error(`"command" is longer than ${MAX_COMMAND_BYTES} bytes; write a long script to a file in several commands, then run it`);
  }
  return command;
}

/** `errorType: errorMessage` of a function error payload. */
function functionErrorOf(payload: string): string {
  try {
    const { errorType, errorMessage } = JSON.parse(payload) as { errorType?: string; errorMessage?: string };
    return [errorType, errorMessage].filter(Boolean).join(': ') || payload;
  } catch {
    return payload;
  }
}

/** The result as the model reads it: how the command ended, then its stdout and stderr. */
function render(result: SandboxResult, timeoutSeconds: number): string {
  const ending = result.timed_out
    ? `timed out after ${timeoutSeconds} s: the command and everything it started were killed`
    : result.exit_code === null
      ? `killed by signal ${result.signal ?? 'unknown'}`
      : `exit code: ${result.exit_code}`;
  return [ending, section('stdout', result.stdout, result.stdout_truncated), section('stderr', result.stderr, result.stderr_truncated)].join('\n');
}

function section(name: string, text: string, truncated: boolean | undefined): string {
  const heading = `--- ${name}${truncated ? ` (the first ${MAX_OUTPUT_BYTES} bytes; the rest was dropped)` : ''} ---`;
  if (text === '') return `${heading}\n(empty)`;
  return `${heading}\n${text.endsWith('\n') ? text.slice(0, -1) : text}`;
}
