/**
 * The one mapping from errors to HTTP responses. 4xx messages reach the client; anything
 * unexpected is logged in full and answered with a generic 500 and the request id.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  LockedError,
  NotFoundError,
  QuotaExceededError,
  UnauthenticatedError,
  UnavailableError,
} from '#core/errors';
import type { Logger } from '#kit/log';
import { json } from './response';

const statuses: [new (...args: never[]) => Error, number][] = [
  [InvalidInputError, 400],
  [UnauthenticatedError, 401],
  [ForbiddenError, 403],
  [NotFoundError, 404],
  [ConflictError, 409],
  [LockedError, 423],
  [QuotaExceededError, 429],
  [UnavailableError, 503],
];

/** The response for an error thrown while serving a request. */
export function errorResponse(error: unknown, requestId: string, log: Logger): APIGatewayProxyStructuredResultV2 {
  const status = statuses.find(([type]) => error instanceof type)?.[1];
  if (!status || !(error instanceof Error)) {
    log.error('unexpected error', {
      error: error instanceof Error ? error.name : typeof error,
      detail: error instanceof Error ? error.message : undefined,
      stack: error instanceof Error ? error.stack : undefined,
    });
    return json(500, { message: 'Internal server error', request_id: requestId });
  }
  if (error instanceof ForbiddenError) return json(403, { message: error.message, code: error.code });
  if (error instanceof UnavailableError) {
    log.warn('dependency unavailable', { detail: error.message });
    const headers: Record<string, string> = error.retryAfterSeconds ? { 'retry-after': String(error.retryAfterSeconds) } : {};
    return json(503, { message: error.message }, headers);
  }
  return json(status, { message: error.message });
}
