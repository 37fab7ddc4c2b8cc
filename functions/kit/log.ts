/**
 * Structured JSON logs, one line per event. Only the fields passed are written: callers
 * pass identifiers and outcomes, never headers, bodies, credentials or secret values.
 */
import { config } from './config';

type Level = 'debug' | 'info' | 'warn' | 'error';
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, string | number | boolean | null | undefined>;

function threshold(): number {
  const level = config.logLevel as Level;
  return order[level] ?? order.info;
}

function write(level: Level, message: string, fields: LogFields): void {
  if (order[level] < threshold()) return;
  const line = JSON.stringify({ level, time: new Date().toISOString(), message, ...fields });
  (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(`${line}\n`);
}

/** A logger that stamps every line with the given context (request id, route). */
export function createLogger(context: LogFields = {}) {
  return {
    debug: (message: string, fields: LogFields = {}) => write('debug', message, { ...context, ...fields }),
    info: (message: string, fields: LogFields = {}) => write('info', message, { ...context, ...fields }),
    warn: (message: string, fields: LogFields = {}) => write('warn', message, { ...context, ...fields }),
    error: (message: string, fields: LogFields = {}) => write('error', message, { ...context, ...fields }),
  };
}

export type Logger = ReturnType<typeof createLogger>;
