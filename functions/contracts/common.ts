/** Pieces shared by every contract. */
import { z } from 'zod';

/** Every error body: `code` on 403, `kind` on 502, `request_id` on 500. */
export const ErrorBody = z.object({
  message: z.string(),
  code: z.string().optional(),
  kind: z.string().optional(),
  request_id: z.string().optional(),
});

/** The `Idempotency-Key` header: 1 to 255 characters. */
export const IdempotencyKey = z.string().min(1).max(255);

/** Headers a handler reads; every other header is ignored. */
export const IdempotencyHeaders = z.object({ 'idempotency-key': IdempotencyKey.optional() });

export const Timestamp = z.iso.datetime();

/** Why an invocation failed: on a trace's `failure` and as a 502's `kind`. */
export const FailureKind = z.enum(['crash', 'no_progress', 'interrupted', 'internal']);

/** The `Idempotency-Key` response header of a run (or of an invite sent with one). */
export const IdempotencyKeyHeader = {
  'Idempotency-Key': { description: 'The invocation key: the one sent, or the one the server generated.', schema: IdempotencyKey },
};
