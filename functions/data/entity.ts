/**
 * The table's item types, declared as zod schemas. Every item read is parsed against its
 * entity: what the domain gets is exactly what the declaration says (keys and bookkeeping
 * attributes the schema does not name are dropped), and an item that does not match is a
 * loud error rather than a wrong value passed on.
 */
import { z } from 'zod';

type Item = Record<string, unknown>;

export interface Entity<T> {
  readonly name: string;
  /** The item as its declared type; throws when it does not match the declaration. */
  parse(item: Item): T;
  /** `parse` for an item that may be absent (a GetItem that found nothing). */
  parseOptional(item: Item | undefined): T | undefined;
}

/** Declares an item type: `name` for errors, `schema` for its attributes. */
export function entity<S extends z.ZodType>(name: string, schema: S): Entity<z.output<S>> {
  function parse(item: Item): z.output<S> {
    const result = schema.safeParse(item);
    if (!result.success) throw new Error(`a ${name} item does not match its declaration: ${z.prettifyError(result.error)}`);
    return result.data;
  }
  return { name, parse, parseOptional: (item) => (item === undefined ? undefined : parse(item)) };
}
