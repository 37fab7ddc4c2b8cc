/**
 * Domain errors. They carry no HTTP status: `functions/http/errors.ts` maps each one to
 * the status and body the interface spec defines.
 */

/** The request is malformed or names something invalid; nothing was changed. */
export class InvalidInputError extends Error {
  override name = 'InvalidInputError';
}

/** The credential is missing, malformed, expired, revoked, or of the wrong kind. */
export class UnauthenticatedError extends Error {
  override name = 'UnauthenticatedError';
}

/** The caller is authenticated but may not do this; `code` says why. */
export class ForbiddenError extends Error {
  override name = 'ForbiddenError';
  constructor(
    message: string,
    readonly code: 'not_provisioned' | 'admin_required',
  ) {
    super(message);
  }
}

/** The thing does not exist for the caller's organization. */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
}

/** An idempotency key was reused with a different request. */
export class ConflictError extends Error {
  override name = 'ConflictError';
}

/** Something else holds the resource (a running invocation holds its session). */
export class LockedError extends Error {
  override name = 'LockedError';
}

/** The organization has used up its invocation quota. */
export class QuotaExceededError extends Error {
  override name = 'QuotaExceededError';
}

/** A dependency (table, bucket, secrets store) cannot be reached right now. */
export class UnavailableError extends Error {
  override name = 'UnavailableError';
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** The invocation ended (recorded, stopped or its session deleted) while work on it went on. */
export class InvocationEndedError extends Error {
  override name = 'InvocationEndedError';
}

/** An attempt went silent (no step, span or checkpoint) for longer than the attempt timeout. */
export class NoProgressError extends Error {
  override name = 'NoProgressError';
}

/** The invocation reached one of its configuration's `limits`: no further model call or attempt starts. */
export class LimitReachedError extends Error {
  override name = 'LimitReachedError';
}
