/** Sessions: run or resume one, read its messages and audit log, list and delete them. */
import { path, type RequestOptions, type Transport } from '../core';
import { GatewayTimeoutError } from '../errors';
import { PagePromise } from '../pagination';
import type {
  AuditEvent,
  Message,
  Session,
  SessionAuditParams,
  SessionAuditResponse,
  SessionGetParams,
  SessionGetResponse,
  SessionListParams,
  SessionListResponse,
  SessionRunParams,
  SessionRunResponse,
} from '../types';

/** The service's own default and bound for `wait_timeout_seconds`. */
const DEFAULT_WAIT_SECONDS = 1800;
/** How much longer than the wait the client gives one answer before it gives up on the connection. */
const ANSWER_MARGIN_MS = 30_000;

export class Sessions {
  constructor(private readonly transport: Transport) {}

  /**
   * Runs or resumes session `id`. Waits up to `wait_timeout_seconds` for the answer,
   * re-attaching with the same key whenever the service ends a slice of the wait with 504;
   * throws `GatewayTimeoutError` (with `invocationKey`) once the whole wait has elapsed.
   */
  async run(id: string, params: SessionRunParams, options: RequestOptions = {}): Promise<SessionRunResponse> {
    const { wait_timeout_seconds: wait = DEFAULT_WAIT_SECONDS, idempotency_key, ...body } = params;
    const key = idempotency_key ?? crypto.randomUUID();
    // One serialization for every re-send: the service knows a re-attach by the body's hash.
    const raw = JSON.stringify(body);
    const deadline = Date.now() + wait * 1000;
    // Whole seconds still to wait, at least 1 once the first request went out (0 would mean "don't wait").
    const remaining = () => (wait === 0 ? 0 : Math.max(1, Math.floor((deadline - Date.now()) / 1000)));
    const sessionPath = path`/sessions/${id}`;
    for (;;) {
      try {
        const response = await this.transport.request<Omit<SessionRunResponse, 'invocation_key'>>(
          {
            method: 'POST',
            path: sessionPath,
            query: () => ({ wait_timeout_seconds: remaining() }),
            body: raw,
            idempotencyKey: key,
            timeoutMs: () => remaining() * 1000 + ANSWER_MARGIN_MS,
          },
          options,
        );
        return { ...response.body, invocation_key: response.headers.get('idempotency-key') ?? key };
      } catch (error) {
        // A 504 (a slice's end, or a gateway's own timeout) leaves the run going: re-attach.
        if (!(error instanceof GatewayTimeoutError) || wait === 0 || deadline - Date.now() < 1000) throw error;
      }
    }
  }

  /** The session and a page of its messages (cursor order); iterate for every message. */
  get(id: string, params: SessionGetParams = {}, options: RequestOptions = {}): PagePromise<SessionGetResponse, Message> {
    const sessionPath = path`/sessions/${id}`;
    return new PagePromise(
      (after) => this.transport.get<SessionGetResponse>({ path: sessionPath, query: { after, limit: params.limit } }, options),
      (page) => page.messages,
      params.after,
    );
  }

  /** Sessions, newest `updated_at` first; iterate for all of them. */
  list(params: SessionListParams = {}, options: RequestOptions = {}): PagePromise<SessionListResponse, Session> {
    return new PagePromise(
      (after) => this.transport.get<SessionListResponse>({ path: '/sessions', query: { after, limit: params.limit } }, options),
      (page) => page.sessions,
      params.after,
    );
  }

  /** The session's audit log in event time order; iterate for every event. */
  audit(id: string, params: SessionAuditParams = {}, options: RequestOptions = {}): PagePromise<SessionAuditResponse, AuditEvent> {
    const auditPath = path`/sessions/${id}/audit`;
    return new PagePromise(
      (after) => this.transport.get<SessionAuditResponse>({ path: auditPath, query: { after, limit: params.limit } }, options),
      (page) => page.events,
      params.after,
    );
  }

  /** Deletes the session, its messages, audit log and traces (a running invocation is stopped first). */
  async delete(id: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.delete({ path: path`/sessions/${id}` }, options);
  }
}
