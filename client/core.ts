/**
 * The transport: one `request` that sends, maps error statuses (errors.ts) and retries by
 * one policy (`retryDecision`), and verb helpers over it. A request's retry mode follows
 * from its method (`retryModeOf`): resources describe each call and never retry themselves,
 * except the run's re-attach after a 504, which is about the caller's wait, not a fault.
 */
import { APIConnectionError, APIConnectionTimeoutError, InvalidArgumentError, errorFor, retryAfterSeconds } from './errors';

export interface ClientOptions {
  /** The service, e.g. `http://127.0.0.1:3000` or the API URL the stack printed. */
  baseUrl: string;
  /** A user bearer token or an organization API key. */
  token?: string;
  /** Per-request timeout in ms when the call sets none (default 60 000, above API Gateway's ~29 s). */
  timeoutMs?: number;
  /** Retries of a retry-safe request after a connection failure or a 503 (default 2). */
  maxRetries?: number;
  /** The fetch to use (default the global one); lets callers observe the traffic. */
  fetch?: typeof fetch;
}

/** Per-call options every method takes. */
export interface RequestOptions {
  signal?: AbortSignal;
  /** Overrides the client's per-request timeout (a run's own is its wait plus a margin). */
  timeoutMs?: number;
  maxRetries?: number;
}

/**
 * How safe a request is to send again, as the spec says:
 * - `idempotent`: GET and DELETE; again after any connection failure or a 503.
 * - `keyed`: POST /sessions/{id} and POST /invites with an Idempotency-Key; the same.
 * - `unsent-only`: POST /secrets, PUT /secrets/{name}, POST /tokens, POST /webhooks,
 *   PUT /integrations/otlp; only when the request certainly never reached the service.
 * - `follow`: a read that follows a running invocation (its events); again after any
 *   connection failure, a 429 or any 5xx, since a follower would rather wait than stop.
 */
export type RetryMode = 'idempotent' | 'keyed' | 'unsent-only' | 'follow';

type Query = Record<string, string | number | boolean | undefined>;

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Built with `path` so ids are encoded. */
  path: string;
  /** A function is evaluated before each try (a run's remaining wait shrinks). */
  query?: Query | (() => Query);
  /** Sent as these exact bytes on every try (a run's identity is the hash of its body). */
  body?: string;
  /** Sent as the Idempotency-Key header; makes a POST or PUT `keyed`. */
  idempotencyKey?: string;
  /** Only for a request safer than its method says (the local sign-in, a cancel) or one that follows. */
  retry?: RetryMode;
  /** A function is evaluated before each try. */
  timeoutMs?: number | (() => number);
  /** False for the health check and the local sign-in. */
  authenticated?: boolean;
}

/** The mode the spec gives a request by its method, and for a POST or PUT by whether it carries an Idempotency-Key. */
function retryModeOf(spec: RequestSpec): RetryMode {
  if (spec.method === 'GET' || spec.method === 'DELETE') return 'idempotent';
  return spec.idempotencyKey === undefined ? 'unsent-only' : 'keyed';
}

/** A request for a verb helper, which sets the method. */
export type VerbSpec = Omit<RequestSpec, 'method'>;

export interface RawResponse<T> {
  status: number;
  headers: Headers;
  /** Parsed JSON; undefined for 204. */
  body: T;
}

/** What went wrong with one try, for the retry policy. */
export type Failure =
  | { kind: 'status'; status: number; headers: Headers }
  | { kind: 'connection'; maybeSent: boolean };

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_RETRIES = 2;
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
/** A Retry-After beyond this is not waited for: the error goes to the caller. */
const MAX_RETRY_AFTER_SECONDS = 60;

/** The retry policy, all of it: whether (and after how long) try number `attempt` (from 0) is followed by another. */
export function retryDecision(mode: RetryMode, failure: Failure, attempt: number, maxRetries: number): { retry: false } | { retry: true; delayMs: number } {
  if (attempt >= maxRetries) return { retry: false };
  const backoff = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt) * (0.75 + Math.random() * 0.25);
  if (failure.kind === 'connection') {
    if (failure.maybeSent && mode === 'unsent-only') return { retry: false };
    return { retry: true, delayMs: backoff };
  }
  if (mode === 'follow') {
    if (failure.status !== 429 && failure.status < 500) return { retry: false };
    return afterOrBackoff(failure.headers, backoff);
  }
  // 503 is the only status the spec calls retryable for every request; 423, 409, 429, 502
  // and 504 mean something to the caller and are never retried here.
  if (failure.status !== 503 || mode === 'unsent-only') return { retry: false };
  return afterOrBackoff(failure.headers, backoff);
}

/** The wait a Retry-After asks for (none beyond the bound), else the backoff. */
function afterOrBackoff(headers: Headers, backoff: number): { retry: false } | { retry: true; delayMs: number } {
  const after = retryAfterSeconds(headers);
  if (after === undefined) return { retry: true, delayMs: backoff };
  return after <= MAX_RETRY_AFTER_SECONDS ? { retry: true, delayMs: after * 1000 } : { retry: false };
}

/** A path with every interpolated value percent-encoded as one segment: path`/sessions/${id}`. */
export function path(strings: TemplateStringsArray, ...values: string[]): string {
  return strings.reduce((out, literal, i) => {
    if (i >= values.length) return out + literal;
    const value = values[i]!;
    // URL parsers resolve `.` and `..` segments (encoded or not), so no request can carry them.
    if (value === '' || value === '.' || value === '..') throw new InvalidArgumentError(`"${value}" cannot be used as an id in a URL path`);
    return out + literal + encodeURIComponent(value);
  }, '');
}

// Codes of failures before any byte reached the service.
const UNSENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Resolves after `ms`; rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function parseBody(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Sends requests to one service with one credential. */
export class Transport {
  readonly baseUrl: string;
  readonly token: string | undefined;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly fetch: typeof fetch;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** Sends `spec`, retrying as `retryDecision` allows; throws an `APIError` subclass for an error status. */
  async request<T>(spec: RequestSpec, options: RequestOptions = {}): Promise<RawResponse<T>> {
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const mode = spec.retry ?? retryModeOf(spec);
    for (let attempt = 0; ; attempt++) {
      let failure: Failure;
      let error: Error;
      try {
        const response = await this.send(spec, options);
        const body = parseBody(response.text);
        if (response.status < 300) return { status: response.status, headers: response.headers, body: body as T };
        failure = { kind: 'status', status: response.status, headers: response.headers };
        error = errorFor(response.status, body, response.headers);
      } catch (thrown) {
        if (!(thrown instanceof APIConnectionError)) throw thrown;
        failure = { kind: 'connection', maybeSent: thrown.maybeSent };
        error = thrown;
      }
      const decision = retryDecision(mode, failure, attempt, maxRetries);
      if (!decision.retry) throw error;
      await sleep(decision.delayMs, options.signal);
    }
  }

  /** GET: the answer's body. */
  async get<T>(spec: VerbSpec, options?: RequestOptions): Promise<T> {
    return (await this.request<T>({ ...spec, method: 'GET' }, options)).body;
  }

  /** POST: the answer's body. */
  async post<T>(spec: VerbSpec, options?: RequestOptions): Promise<T> {
    return (await this.request<T>({ ...spec, method: 'POST' }, options)).body;
  }

  /** PUT: the answer's body. */
  async put<T>(spec: VerbSpec, options?: RequestOptions): Promise<T> {
    return (await this.request<T>({ ...spec, method: 'PUT' }, options)).body;
  }

  /** DELETE; the service answers 204. */
  async delete(spec: VerbSpec, options?: RequestOptions): Promise<void> {
    await this.request({ ...spec, method: 'DELETE' }, options);
  }

  private async send(spec: RequestSpec, options: RequestOptions): Promise<{ status: number; headers: Headers; text: string }> {
    const query = typeof spec.query === 'function' ? spec.query() : (spec.query ?? {});
    const url = new URL(this.baseUrl + spec.path);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (spec.idempotencyKey !== undefined) headers['idempotency-key'] = spec.idempotencyKey;
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    if (spec.authenticated !== false && this.token) headers.authorization = `Bearer ${this.token}`;
    const timeoutMs = options.timeoutMs ?? (typeof spec.timeoutMs === 'function' ? spec.timeoutMs() : spec.timeoutMs) ?? this.timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      // The body is read inside the try: a connection can break mid-answer too.
      const response = await this.fetch(url, { method: spec.method, headers, body: spec.body, signal });
      return { status: response.status, headers: response.headers, text: await response.text() };
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (timeout.aborted) {
        throw new APIConnectionTimeoutError(`no answer from ${url.origin} within ${Math.round(timeoutMs / 1000)} s`, true, { cause: error });
      }
      const code = causeCode(error);
      const unsent = code !== undefined && UNSENT_CODES.has(code);
      throw new APIConnectionError(`cannot reach ${url.origin}: ${code ?? (error as Error).message}`, !unsent, { cause: error });
    }
  }
}

