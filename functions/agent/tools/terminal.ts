/**
 * The terminal tool: the model runs `bash -c` commands in a working directory of its
 * invocation, which starts empty and keeps its files from one command to the next. The
 * commands run in the sandbox function (`functions/sandbox/run-command.ts`), invoked
 * through Lambda with the invocation as its tenant: a function whose role may do nothing
 * and whose commands see no credential, so nothing the model runs can reach the service's
 * resources, and whose execution environments each serve one invocation only. Each command
 * carries presigned URLs of the invocation's workspace snapshot, so the files survive a new
 * environment.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { AgentConfig } from '#contracts/agent';
import { MAX_COMMAND_BYTES, MAX_OUTPUT_BYTES, MAX_SNAPSHOT_BYTES, type SandboxRequest, type SandboxResult } from '#contracts/sandbox';
import { config } from '#kit/config';
import { sha256 } from '#kit/ids';
import type { ToolboxContext, ToolSet } from './types';
import type { Tool } from '../types';

const lambda = new LambdaClient({});

/** `tools.terminal.timeout_seconds` when the configuration does not say (CONTRACT.md). */
export const DEFAULT_TIMEOUT_SECONDS = 30;

// The snapshot URLs outlive the longest command and the transfers around it.
const SNAPSHOT_URL_SECONDS = 15 * 60;

/**
 * The workspace of an invocation, and its tenant on the sandbox function: a digest, so the
 * sandbox is never handed a path, two organizations using the same invocation key never
 * share a directory or an environment, and it fits Lambda's tenant id (64 hex characters).
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
        workspace: workspaceOf(context.organizationId, context.invocationKey),
        timeoutSeconds: options.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS,
        ...(context.workspaceSnapshotUrls ? { snapshotUrls: () => context.workspaceSnapshotUrls!(SNAPSHOT_URL_SECONDS) } : {}),
      }),
    ],
  };
}

interface TerminalOptions {
  functionName: string;
  workspace: string;
  timeoutSeconds: number;
  /** URLs of the invocation's workspace snapshot; without them files last only as long as an environment. */
  snapshotUrls?: () => Promise<{ get: string; put: string }>;
}

function terminalTool(options: TerminalOptions): Tool {
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
      const command = commandOf(args);
      const request: SandboxRequest = {
        workspace: options.workspace,
        command,
        timeout_seconds: options.timeoutSeconds,
        ...(options.snapshotUrls ? { snapshot: await options.snapshotUrls() } : {}),
      };
      const answer = await lambda.send(
        // The invocation is the tenant: an environment only ever runs its commands.
        new InvokeCommand({ FunctionName: options.functionName, TenantId: options.workspace, Payload: Buffer.from(JSON.stringify(request)) }),
        { abortSignal: context.signal },
      );
      const payload = Buffer.from(answer.Payload ?? []).toString('utf8');
      if (answer.FunctionError) throw new Error(`the sandbox could not run the command: ${functionErrorOf(payload)}`);
      const result = JSON.parse(payload) as SandboxResult;
      return [...notes(result), render(result, options.timeoutSeconds)].join('\n');
    },
  };
}

const SNAPSHOT_BOUND = `${MAX_SNAPSHOT_BYTES / (1024 * 1024)} MiB`;

/** What the model must know about its working directory beyond the command's own result. */
function notes(result: SandboxResult): string[] {
  const said: string[] = [];
  if (result.workspace === 'lost') {
    said.push(`note: the working directory was reset before this command: it had grown past ${SNAPSHOT_BOUND} compressed, so its files could not be kept and are gone`);
  }
  if (result.snapshot?.status === 'too_large') {
    said.push(`note: the working directory is now larger than ${SNAPSHOT_BOUND} compressed: its files stay for now, but may be lost before a later command; keep it smaller to keep them`);
  } else if (result.snapshot?.status === 'failed') {
    said.push(`note: the working directory could not be saved (${result.snapshot.error}): its files stay for now, but may be lost before a later command`);
  }
  return said;
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
