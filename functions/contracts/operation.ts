/**
 * An operation: one route of the route table with its contract. The same object gives the
 * handler its validators and its TypeScript types (`defineHandler`) and the OpenAPI
 * document its operation (`functions/openapi/document.ts`), so the two cannot drift.
 */
import type { z } from 'zod';
import type { Route } from '#functions/routes';

/** The zod schemas a handler validates its input with, each one optional. */
export interface InputSchemas {
  params?: z.ZodType;
  query?: z.ZodType;
  headers?: z.ZodType;
  body?: z.ZodType;
}

/** A response header the operation sets. */
export interface HeaderSpec {
  description: string;
  schema: z.ZodType;
}

/** A response the handler itself answers with (as opposed to an error thrown as a domain error). */
export interface ResponseSpec {
  description: string;
  /** The JSON body; absent for a response without one (204). */
  body?: z.ZodType;
  headers?: Readonly<Record<string, HeaderSpec>>;
}

export type Responses = Readonly<Record<number, ResponseSpec>>;

/**
 * Statuses of domain errors answered with `ErrorBody` (functions/http/errors.ts) that an
 * operation's own logic raises. The others are implied: 400 by input schemas, and 401, 403
 * and 503 by an authenticated route (credential checks, which also fetch the sign-in keys).
 */
export type ErrorStatus = 404 | 409 | 423 | 429;

export interface Operation<R extends Route = Route, I extends InputSchemas = InputSchemas, S extends Responses = Responses> {
  route: R;
  /** One line, imperative. */
  summary: string;
  /** What a client needs to know beyond the schemas (CommonMark). */
  description?: string;
  /** The group the operation is listed under. */
  tag: string;
  input: I;
  responses: S;
  errors: readonly ErrorStatus[];
}

/** An operation, its types inferred (literal statuses included) and checked. */
export function defineOperation<R extends Route, const I extends InputSchemas, const S extends Responses>(
  operation: Operation<R, I, S>,
): Operation<R, I, S> {
  return operation;
}
