/** A one-line spinner with elapsed time, for a terminal only (stderr, so stdout stays clean). */
import { duration } from './render';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const INTERVAL_MS = 100;

export interface SpinnerStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** Starts a spinner on `stream` when it is a terminal; the returned function stops and erases it. */
export function startSpinner(stream: SpinnerStream, label: string, now: () => number = Date.now): () => void {
  if (!stream.isTTY) return () => {};
  const started = now();
  let frame = 0;
  const draw = () => {
    stream.write(`\r\x1b[K${FRAMES[frame++ % FRAMES.length]} ${label} ${duration(now() - started)}`);
  };
  draw();
  const timer = setInterval(draw, INTERVAL_MS);
  return () => {
    clearInterval(timer);
    stream.write('\r\x1b[K');
  };
}
