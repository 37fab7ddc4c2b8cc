/**
 * Signed, opaque list cursors: `base64url(JSON payload) + "." + base64url(HMAC-SHA256)`.
 * The payload names the organization and the list (`kind`) it pages, so a cursor cannot
 * be edited, replayed by another organization or passed to another list.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { cursorKey } from '#data/cursor-key';
import { InvalidInputError } from './errors';

/** The lists that page with signed cursors. */
export type CursorKind = 'audit' | 'sessions' | 'memories' | 'trace' | 'traces';

/** What a cursor carries: its binding plus the list's own position fields. */
export interface CursorPayload {
  organizationId: string;
  kind: CursorKind;
  [field: string]: unknown;
}

const mac = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest();

/** A token for `payload`. */
export async function sign(payload: CursorPayload): Promise<string> {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${mac(await cursorKey(), body).toString('base64url')}`;
}

/** The payload of a token signed here for this organization and list; InvalidInputError otherwise. */
export async function verify(token: string, binding: { organizationId: string; kind: CursorKind }): Promise<CursorPayload> {
  const invalid = new InvalidInputError('invalid pagination cursor');
  const [body, signature, extra] = token.split('.');
  if (!body || !signature || extra !== undefined) throw invalid;
  const expected = mac(await cursorKey(), body);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
  let payload: CursorPayload;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
  } catch {
    throw invalid;
  }
  if (payload?.organizationId !== binding.organizationId || payload.kind !== binding.kind) throw invalid;
  return payload;
}
