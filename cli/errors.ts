/**
 * What the CLI says and which exit code it returns for every failure: one table, so
 * scripts can rely on the codes and `--help` lists them from the same place.
 */
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  GatewayTimeoutError,
  InternalServerError,
  InvalidArgumentError,
  NotFoundError,
  PermissionDeniedError,
  QuotaExceededError,
  RunFailedError,
  ServiceUnavailableError,
  SessionLockedError,
} from '../client/errors';
import { ConfigError } from './config';

/** Bad command-line usage: unknown command or option, missing or malformed argument. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Ctrl-C while following an invocation: `message` says what became of it, `hint` what to do next. */
export class InterruptedError extends Error {
  override name = 'InterruptedError';
  /** Shown with --json. */
  readonly body: { invocation_key: string; cancelled: boolean };
  constructor(
    readonly invocationKey: string,
    message: string,
    readonly hint: string,
    readonly cancelled = false,
  ) {
    super(message);
    this.body = { invocation_key: invocationKey, cancelled };
  }
}

/** A followed invocation ended FAILED. */
export class InvocationFailedError extends Error {
  override name = 'InvocationFailedError';
  /** Shown with --json. */
  readonly body: { invocation_key: string; kind?: string };
  constructor(
    readonly invocationKey: string,
    readonly failure: { kind: string; message: string } | undefined,
  ) {
    super(failure?.message ?? `invocation ${invocationKey} failed`);
    this.body = { invocation_key: invocationKey, ...(failure ? { kind: failure.kind } : {}) };
  }
}

/** Exit codes, stable for scripts. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  badRequest: 3,
  unauthenticated: 4,
  forbidden: 5,
  notFound: 6,
  conflict: 7,
  sessionBusy: 8,
  quotaExceeded: 9,
  runFailed: 10,
  unavailable: 11,
  stillRunning: 12,
  unreachable: 13,
  interrupted: 130,
} as const;

/** The exit code table as `--help` shows it. */
export const EXIT_CODE_HELP: [number, string][] = [
  [EXIT.ok, 'success'],
  [EXIT.failure, 'unexpected failure (a 500 from the service, or any other error)'],
  [EXIT.usage, 'bad usage: unknown command or option, missing argument, unusable profile file'],
  [EXIT.badRequest, '400: the service rejected the request before anything ran'],
  [EXIT.unauthenticated, '401: no credential, or it is invalid, expired or of the wrong kind'],
  [EXIT.forbidden, '403: not allowed (not_provisioned: the account is not in the private beta)'],
  [EXIT.notFound, '404: no such session, trace, agent, secret, token, memory or webhook, or no OTLP export'],
  [EXIT.conflict, '409: the invocation key was used with a different body, or the invocation to cancel had ended'],
  [EXIT.sessionBusy, '423: another invocation is running in the session'],
  [EXIT.quotaExceeded, '429: the organization used up its invocation quota'],
  [EXIT.runFailed, '502: the run failed (or the followed invocation failed)'],
  [EXIT.unavailable, '503: the service is unavailable (after retries)'],
  [EXIT.stillRunning, '504: the wait ended and the run goes on; re-attach with the same --key'],
  [EXIT.unreachable, 'the service could not be reached, or did not answer in time'],
  [EXIT.interrupted, 'Ctrl-C while following an invocation: it goes on unless --cancel-on-interrupt'],
];

/** The exit code for a failure. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof InvalidArgumentError) return EXIT.usage;
  if (error instanceof BadRequestError) return EXIT.badRequest;
  if (error instanceof AuthenticationError) return EXIT.unauthenticated;
  if (error instanceof PermissionDeniedError) return EXIT.forbidden;
  if (error instanceof NotFoundError) return EXIT.notFound;
  if (error instanceof ConflictError) return EXIT.conflict;
  if (error instanceof SessionLockedError) return EXIT.sessionBusy;
  if (error instanceof QuotaExceededError) return EXIT.quotaExceeded;
  if (error instanceof RunFailedError || error instanceof InvocationFailedError) return EXIT.runFailed;
  if (error instanceof InterruptedError) return EXIT.interrupted;
  if (error instanceof ServiceUnavailableError) return EXIT.unavailable;
  if (error instanceof GatewayTimeoutError) return EXIT.stillRunning;
  if (error instanceof APIConnectionError) return EXIT.unreachable;
  return EXIT.failure;
}

/** A one-paragraph message for a person: what happened and what to do. */
export function describeError(error: unknown): string {
  if (error instanceof UsageError) return `${error.message}\nRun "agent-sessions --help" for usage.`;
  if (error instanceof ConfigError || error instanceof InvalidArgumentError) return error.message;
  if (error instanceof BadRequestError) return `invalid request: ${error.message}`;
  if (error instanceof AuthenticationError) {
    return `not authenticated: ${error.message}\nSign in with "agent-sessions login" (locally), or set AGENT_SESSIONS_TOKEN or --token (/tokens and /invites need a user sign-in, not an API key).`;
  }
  if (error instanceof PermissionDeniedError) {
    return error.code === 'not_provisioned'
      ? `this account is not in the private beta (not_provisioned): ${error.message}\nAsk an admin of an organization to invite your email.`
      : `not allowed: ${error.message}`;
  }
  if (error instanceof NotFoundError) return `not found: ${error.message}`;
  if (error instanceof ConflictError) {
    return error.invocationStatus ? `conflict: ${error.message}` : `conflict: ${error.message}\nUse a new --key, or re-send the original request unchanged.`;
  }
  if (error instanceof SessionLockedError) {
    return `session busy: ${error.message}\nRe-send with the running invocation's --key to attach, wait for it to finish, or use another session id.`;
  }
  if (error instanceof QuotaExceededError) return `quota exceeded: ${error.message}\nContact the service operator.`;
  if (error instanceof RunFailedError) return `run failed (${error.kind ?? 'unknown'}): ${error.message}\nRetry with a new --key; re-sending this key replays the failure.`;
  if (error instanceof InvocationFailedError) {
    return `invocation ${error.invocationKey} failed (${error.failure?.kind ?? 'unknown'}): ${error.message}\nRead it with "agent-sessions traces show ${error.invocationKey}".`;
  }
  if (error instanceof InterruptedError) return `${error.message}\n${error.hint}`;
  if (error instanceof ServiceUnavailableError) {
    const after = error.retryAfterSeconds;
    return `service unavailable: ${error.message}\nTry again${after !== undefined ? ` in ${after} s` : ' later'}.`;
  }
  if (error instanceof GatewayTimeoutError) {
    const key = error.invocationKey;
    return `still running: the wait ended before the run did (it goes on in the service).${key ? `\nRe-attach with --key ${key}, or read it later with "agent-sessions traces show ${key}".` : ''}`;
  }
  if (error instanceof InternalServerError) return `service error${error.requestId ? ` (request id ${error.requestId})` : ''}: ${error.message}`;
  if (error instanceof APIError) return `the service answered ${error.status}: ${error.message}`;
  if (error instanceof APIConnectionTimeoutError) return `${error.message}\nThe service may still be working on it.`;
  if (error instanceof APIConnectionError) return `${error.message}\nIs the service running ("npm start")? Set its address with --url or AGENT_SESSIONS_URL.`;
  return error instanceof Error ? error.message : String(error);
}
