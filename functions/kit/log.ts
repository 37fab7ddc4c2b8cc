/**
 * Structured JSON logs through Powertools for AWS Lambda's logger, one line per event.
 * Only the fields passed are written: callers pass identifiers and outcomes, never headers,
 * bodies, credentials or secret values. The service's own small interface stays in front of
 * it, so every caller (and the harness, which receives a `Logger`) is unchanged.
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { config } from './config';
import { SERVICE_NAME } from './metric-names';

export type LogFields = Record<string, string | number | boolean | null | undefined>;

const LEVELS = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' } as const;

let root: PowertoolsLogger | undefined;

/** The process's logger, made at first use: the level is read then, as the other settings are. */
function logger(): PowertoolsLogger {
  root ??= new PowertoolsLogger({ serviceName: SERVICE_NAME, logLevel: LEVELS[config.logLevel as keyof typeof LEVELS] ?? LEVELS.info });
  return root;
}

/** A logger that stamps every line with the given context (request id, route). */
export function createLogger(context: LogFields = {}) {
  return {
    debug: (message: string, fields: LogFields = {}) => logger().debug(message, { ...context, ...fields }),
    info: (message: string, fields: LogFields = {}) => logger().info(message, { ...context, ...fields }),
    warn: (message: string, fields: LogFields = {}) => logger().warn(message, { ...context, ...fields }),
    error: (message: string, fields: LogFields = {}) => logger().error(message, { ...context, ...fields }),
  };
}

export type Logger = ReturnType<typeof createLogger>;
