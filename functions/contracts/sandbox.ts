/**
 * The sandbox function's event and result: what the terminal tool sends to the function
 * that runs commands, and what it gets back. The function checks the event itself, since
 * nothing in front of it does.
 */
import { z } from 'zod';

/** The longest a command may run (`tools.terminal.timeout_seconds` is at most this). */
export const MAX_COMMAND_SECONDS = 300;

/** The sandbox function's own timeout: the longest command, plus room to kill it and answer. */
export const SANDBOX_FUNCTION_TIMEOUT_SECONDS = MAX_COMMAND_SECONDS + 30;

/**
 * Linux refuses a single argument longer than 128 KiB (MAX_ARG_STRLEN), and the command
 * is `bash -c`'s argument.
 */
export const MAX_COMMAND_BYTES = 128 * 1024 - 1;

/** What is kept of stdout and of stderr each; the rest is dropped and flagged. */
export const MAX_OUTPUT_BYTES = 32 * 1024;

export const SandboxRequest = z.strictObject({
  /** A hex SHA-256 the caller derives from the organization and the invocation key: never a path. */
  workspace: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters'),
  command: z
    .string()
    .min(1)
    .refine((command) => Buffer.byteLength(command) <= MAX_COMMAND_BYTES, `must be at most ${MAX_COMMAND_BYTES} bytes`)
    .refine((command) => !command.includes('\0'), 'must not contain NUL characters'),
  timeout_seconds: z.int().min(1).max(MAX_COMMAND_SECONDS),
});
export type SandboxRequest = z.infer<typeof SandboxRequest>;

export interface SandboxResult {
  /** null when the shell was ended by a signal. */
  exit_code: number | null;
  signal?: string;
  /** UTF-8 decoded; bytes that are not UTF-8 become U+FFFD. */
  stdout: string;
  stderr: string;
  /** The command ran out of time and its whole process group was killed. */
  timed_out: boolean;
  stdout_truncated?: true;
  stderr_truncated?: true;
  /**
   * The workspace was created empty for this command: the invocation's first command in
   * this execution environment, or its earlier files were cleared (another invocation's
   * command ran there in between, or the command ran in another environment).
   */
  workspace_created: boolean;
}
