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

/** The largest workspace snapshot kept, compressed; a larger workspace does not survive a new environment. */
export const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;

export const SandboxRequest = z.strictObject({
  /** A hex SHA-256 the caller derives from the organization and the invocation key: never a path. */
  workspace: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters'),
  command: z
    .string()
    .min(1)
    .refine((command) => Buffer.byteLength(command) <= MAX_COMMAND_BYTES, `must be at most ${MAX_COMMAND_BYTES} bytes`)
    .refine((command) => !command.includes('\0'), 'must not contain NUL characters'),
  timeout_seconds: z.int().min(1).max(MAX_COMMAND_SECONDS),
  /**
   * Presigned URLs of the invocation's workspace snapshot, signed by the caller for this
   * invocation's object only: `get` restores it in a fresh environment, `put` saves it after
   * a command that changed the workspace. Without them the workspace lives only as long as
   * the environment.
   */
  snapshot: z.strictObject({ get: z.url(), put: z.url() }).optional(),
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
   * How the command found its working directory: `kept` from the invocation's earlier
   * commands in this environment; `restored` from its snapshot in a fresh environment;
   * `new` (empty: nothing was saved before); `lost` (empty: the last snapshot was over the
   * bound, so the earlier files are gone).
   */
  workspace: 'kept' | 'restored' | 'new' | 'lost';
  /** After a command that changed the workspace, when snapshots are asked for: what became of its snapshot. */
  snapshot?: { status: 'saved'; bytes: number } | { status: 'too_large' } | { status: 'failed'; error: string };
}
