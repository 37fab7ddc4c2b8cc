/**
 * Signed, opaque list cursors: `base64url(JSON payload) + "." + base64url(HMAC-SHA256)`.
 * The payload names the organization and the list (`kind`) it pages, so a cursor cannot
 * be edited, replayed by another organization or passed to another list.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidInputError } from './errors';

/** The lists that page with signed cursors. */
export type CursorKind = 'audit' | 'sessions' | 'memories' | 'trace' | 'traces' | 'events' | 'deliveries';

/**
 * What signs one organization's cursors: every store of a list that pages is one, so the
 * organization its cursors are bound to is the one it reads.
 */
export interface CursorScope {
  readonly organizationId: string;
  /** The deployment's cursor signing key. */
  cursorKey(): Promise<Buffer>;
}

const mac = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest();

/** A token for a position in one of the scope's lists. */
export async function sign(scope: CursorScope, kind: CursorKind, position: Record<string, unknown>): Promise<string> {
  const payload = { ...position, organizationId: scope.organizationId, kind };
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${mac(await scope.cursorKey(), body).toString('base64url')}`;
}

/**
 * The position in a token signed here for this scope's organization and this list;
 * InvalidInputError otherwise. The position's fields are the list's to check.
 */
export async function verify(scope: CursorScope, kind: CursorKind, token: string): Promise<Record<string, unknown>> {
  const invalid = new InvalidInputError('invalid pagination cursor');
  const [body, signature, extra] = token.split('.');
  if (!body || !signature || extra !== undefined) throw invalid;
  const expected = mac(await scope.cursorKey(), body);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (typeof payload !== 'object' || payload === null) throw invalid;
  const { organizationId, kind: signedKind, ...position } = payload as Record<string, unknown>;
  if (organizationId !== scope.organizationId || signedKind !== kind) throw invalid;
  return position;
}
