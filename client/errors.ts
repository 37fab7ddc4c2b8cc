/**
 * The client's errors: one class per status the interface defines, plus connection
 * failures. `errorFor` is the only place a status becomes a class.
 */

/** Every error the client throws. */
export class AgentSessionsError extends Error {
  override name = 'AgentSessionsError';
}

/** An argument the client refuses before sending anything (e.g. an id no URL can carry). */
export class InvalidArgumentError extends AgentSessionsError {
  override name = 'InvalidArgumentError';
}

/** The body of an error answer: `message`, plus `code` (403), `kind` (502), `invocation_key` (504), `request_id` (500), `status` (409 to a cancel). */
export interface ErrorBody {
  message: string;
  code?: string;
  kind?: string;
  invocation_key?: string;
  request_id?: string;
  status?: string;
}

/** The service answered with an error status. */
export class APIError extends AgentSessionsError {
  override name = 'APIError';
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Headers,
  ) {
    super(body.message);
  }
}

/** 400: rejected before anything ran (invalid input, cursor, limit or filters). */
export class BadRequestError extends APIError {
  override name = 'BadRequestError';
}

/** 401: the credential is missing, malformed, expired or of the wrong kind for the endpoint. */
export class AuthenticationError extends APIError {
  override name = 'AuthenticationError';
}

/** 403: the account is not in the private beta (`code` is `not_provisioned`) or may not do this. */
export class PermissionDeniedError extends APIError {
  override name = 'PermissionDeniedError';
  get code(): string | undefined {
    return this.body.code;
  }
}

/** 404: no such session, secret, agent, revision, token, memory, invocation or webhook in this organization, or no OTLP export set. */
export class NotFoundError extends APIError {
  override name = 'NotFoundError';
}

/**
 * 409: the idempotency key was already used with a different body (or on another session),
 * or the invocation to cancel already ended otherwise (`invocationStatus` says how).
 */
export class ConflictError extends APIError {
  override name = 'ConflictError';
  get invocationStatus(): string | undefined {
    return this.body.status;
  }
}

/** 423: another invocation is running in this session. */
export class SessionLockedError extends APIError {
  override name = 'SessionLockedError';
}

/** 429: the organization has used up its private-beta invocation quota. */
export class QuotaExceededError extends APIError {
  override name = 'QuotaExceededError';
}

/** 500: an unexpected fault of the service; `requestId` names it in the service's logs. */
export class InternalServerError extends APIError {
  override name = 'InternalServerError';
  get requestId(): string | undefined {
    return this.body.request_id;
  }
}

/** 502: the run itself failed; `kind` is the failure class. Retry with a new key. */
export class RunFailedError extends APIError {
  override name = 'RunFailedError';
  get kind(): string | undefined {
    return this.body.kind;
  }
}

/** 503: the service (or a trace's span store) is unavailable for now; `retryAfterSeconds` when it said. */
export class ServiceUnavailableError extends APIError {
  override name = 'ServiceUnavailableError';
  get retryAfterSeconds(): number | undefined {
    return retryAfterSeconds(this.headers);
  }
}

/** 504: the requested wait elapsed and the run continues server-side; re-attach with `invocationKey`. */
export class GatewayTimeoutError extends APIError {
  override name = 'GatewayTimeoutError';
  get invocationKey(): string | undefined {
    return this.body.invocation_key ?? this.headers.get('idempotency-key') ?? undefined;
  }
}

/** The service could not be reached, or the connection broke before an answer. */
export class APIConnectionError extends AgentSessionsError {
  override name = 'APIConnectionError';
  constructor(
    message: string,
    /** False only when the request certainly never reached the service (refused, unresolvable). */
    readonly maybeSent: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** No answer within the client's own per-request timeout. */
export class APIConnectionTimeoutError extends APIConnectionError {
  override name = 'APIConnectionTimeoutError';
}

const CLASSES: Record<number, new (status: number, body: ErrorBody, headers: Headers) => APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  423: SessionLockedError,
  429: QuotaExceededError,
  500: InternalServerError,
  502: RunFailedError,
  503: ServiceUnavailableError,
  504: GatewayTimeoutError,
};

/** The error for an error answer; `body` is the parsed JSON, or the raw text when it was not JSON. */
export function errorFor(status: number, body: unknown, headers: Headers): APIError {
  const parsed: ErrorBody =
    body && typeof body === 'object' && typeof (body as ErrorBody).message === 'string'
      ? (body as ErrorBody)
      : { message: typeof body === 'string' && body.trim() ? body.trim().slice(0, 500) : `the service answered ${status} with no message` };
  const ErrorClass = CLASSES[status] ?? APIError;
  return new ErrorClass(status, parsed, headers);
}

/** The `Retry-After` header in seconds (integer or HTTP date), when present and sane. */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
