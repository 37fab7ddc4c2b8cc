/**
 * The silence watchdog of an attempt: it measures the time since the attempt last made
 * progress (a span written, a step checkpointed), never the length of a slice. Once the
 * silence passes the attempt timeout it aborts everything the slice is waiting on, and
 * if the slice has not unwound a grace period later, `expired` rejects so the task ends
 * anyway (as `NoProgressError`, classified `no_progress`).
 */
import { NoProgressError } from './errors';

// How long an aborted slice may take to record its cut-off spans before it is given up.
const GRACE_MS = 2_000;

export interface Watchdog {
  /** Aborted, with a `NoProgressError` as reason, once the silence passed the limit. */
  signal: AbortSignal;
  /** The attempt made progress: the silence starts over. */
  progress(): void;
  /** Rejects with `NoProgressError` a grace period after the signal aborted; never resolves. */
  expired: Promise<never>;
  /** Aborts as silence does, with `error` as reason, at epoch ms `at` (a limit's deadline). */
  until(at: number, error: Error): void;
  /** Stops the clock for good (the slice is over). */
  stop(): void;
}

/** A watchdog that starts counting now (at the handler call: a cold start is not silence). */
export function silenceWatchdog(silenceMs: number): Watchdog {
  const controller = new AbortController();
  let reject!: (error: Error) => void;
  const expired = new Promise<never>((_, rejectExpired) => {
    reject = rejectExpired;
  });
  // Raced against the slice, which handles it; never an unhandled rejection on its own.
  expired.catch(() => undefined);
  let graceTimer: NodeJS.Timeout | undefined;
  let deadlineTimer: NodeJS.Timeout | undefined;
  const abort = (error: Error) => {
    if (controller.signal.aborted) return;
    controller.abort(error);
    graceTimer = setTimeout(() => reject(error), GRACE_MS);
  };
  const fire = () => abort(new NoProgressError(`the attempt made no progress for ${silenceMs / 1000} s and was stopped`));
  let timer: NodeJS.Timeout | undefined = setTimeout(fire, silenceMs);
  return {
    signal: controller.signal,
    expired,
    progress() {
      if (controller.signal.aborted || timer === undefined) return;
      clearTimeout(timer);
      timer = setTimeout(fire, silenceMs);
    },
    until(at, error) {
      clearTimeout(deadlineTimer);
      deadlineTimer = setTimeout(() => abort(error), Math.max(0, at - Date.now()));
    },
    stop() {
      clearTimeout(timer);
      clearTimeout(graceTimer);
      clearTimeout(deadlineTimer);
      timer = undefined;
    },
  };
}
