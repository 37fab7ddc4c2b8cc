/** Following an invocation from the command line: the live tree or JSON lines, and what Ctrl-C does. */
import type { AgentSessions } from '../client/index';
import { ConflictError } from '../client/errors';
import type { InvocationEndedEvent } from '../client/types';
import type { Context, OptionSpec } from './commands/shared';
import { describeError, InterruptedError } from './errors';
import { jsonLinesView, treeView } from './live';

/** The options of every command that follows an invocation. */
export const FOLLOW_OPTIONS: Record<string, OptionSpec> = {
  'cancel-on-interrupt': { type: 'boolean', help: 'Ctrl-C cancels the invocation (by default Ctrl-C detaches and it goes on)' },
};

/**
 * Shows the events of invocation `key` until it ends or `signal` aborts: JSON lines on stdout
 * with --json, else the tree on stderr (live on a terminal). Resolves to the last event,
 * `invocation_ended`, or undefined when stopped first.
 */
export async function showEvents(context: Context, client: AgentSessions, key: string, signal: AbortSignal): Promise<InvocationEndedEvent | undefined> {
  const view = context.json ? jsonLinesView(context.io.stdout) : treeView(context.io.stderr);
  try {
    for await (const event of client.traces.events(key, {}, { signal })) {
      view.show(event);
      if (event.type === 'invocation_ended') return event;
    }
    return undefined;
  } finally {
    view.close();
  }
}

function onProcessInterrupt(handler: () => void): () => void {
  process.on('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}

/**
 * Runs `work` with a signal that Ctrl-C aborts. After a Ctrl-C it cancels invocation `key`
 * when --cancel-on-interrupt says so (a second Ctrl-C gives up on that), then throws
 * `InterruptedError` saying how to re-attach.
 */
export async function interruptible<T>(context: Context, key: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const first = new AbortController();
  const second = new AbortController();
  const stop = (context.io.onInterrupt ?? onProcessInterrupt)(() => (first.signal.aborted ? second : first).abort());
  try {
    try {
      const result = await work(first.signal);
      if (!first.signal.aborted) return result;
    } catch (error) {
      if (!first.signal.aborted) throw error;
    }
    throw await interruption(context, key, second.signal);
  } finally {
    stop();
  }
}

/** What became of invocation `key` after a Ctrl-C, as the error to exit with. */
async function interruption(context: Context, key: string, signal: AbortSignal): Promise<InterruptedError> {
  const reattach = `Re-attach with "agent-sessions traces follow ${key}", or stop it with "agent-sessions traces cancel ${key}".`;
  if (context.values['cancel-on-interrupt'] !== true) return new InterruptedError(key, `detached from invocation ${key}: it goes on in the service.`, reattach);
  try {
    const cancelled = await (await context.client()).traces.cancel(key, { signal });
    const failure = cancelled.failure ? ` (${cancelled.failure.kind}: ${cancelled.failure.message})` : '';
    return new InterruptedError(key, `cancelled invocation ${key}${failure}.`, `Read it with "agent-sessions traces show ${key}".`, true);
  } catch (error) {
    if (error instanceof ConflictError) {
      return new InterruptedError(key, `invocation ${key} had already ended ${error.invocationStatus ?? ''}`.trimEnd() + '.', `Read it with "agent-sessions traces show ${key}".`);
    }
    const why = signal.aborted ? 'interrupted again' : describeError(error).split('\n')[0];
    return new InterruptedError(key, `detached from invocation ${key}, but cancelling it failed (${why}): it may go on in the service.`, reattach);
  }
}
