/**
 * `output_format`: a `json_schema` answer must parse as JSON and validate against the
 * configured schema (ajv). A failing answer is not final: the model is told why and
 * answers again within `max_steps`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019';
import { Ajv2020 } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { AgentConfig } from '#contracts/agent';
import { InvalidInputError } from '#core/errors';

type OutputFormat = NonNullable<AgentConfig['output_format']>;

// A schema is user input compiled to code: keep it to a size no honest schema needs.
const MAX_SCHEMA_BYTES = 64 * 1024;
// How many validation errors the model is shown; the first few say enough.
const MAX_REPORTED_ERRORS = 5;

/** The dialect a schema declares (`$schema`), 2020-12 when it declares none. */
function ajvFor(schema: Record<string, unknown>) {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  // Unknown formats and keywords are refused rather than silently ignored: a schema that
  // cannot be enforced as written is a configuration error, reported before anything runs.
  const options = { allErrors: true, strict: true, strictRequired: false, strictTypes: false, strictTuples: false, allowUnionTypes: true } as const;
  const ajv = /draft-0[467]/.test(dialect) ? new Ajv(options) : /2019-09/.test(dialect) ? new Ajv2019(options) : new Ajv2020(options);
  addFormats(ajv);
  return ajv;
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  if (Buffer.byteLength(JSON.stringify(schema), 'utf8') > MAX_SCHEMA_BYTES) {
    throw new InvalidInputError(`output_format.schema is larger than ${MAX_SCHEMA_BYTES / 1024} KiB`);
  }
  try {
    return ajvFor(schema).compile(schema);
  } catch (error) {
    throw new InvalidInputError(`output_format.schema is not a usable JSON Schema: ${(error as Error).message}`);
  }
}

/** Throws InvalidInputError when the format cannot be enforced (a schema that does not compile). */
export function checkOutputFormat(format: OutputFormat | undefined): void {
  if (format?.type === 'json_schema') compile(format.schema);
}

function describe(errors: ErrorObject[]): string {
  return errors
    .slice(0, MAX_REPORTED_ERRORS)
    .map((error) => `${error.instancePath || '(the whole value)'} ${error.message ?? 'is invalid'}`)
    .join('; ');
}

/**
 * The answer check for `runSteps`: undefined for text answers, else a function that
 * returns why an answer is not acceptable (to send to the model) or undefined when it is.
 */
export function answerValidator(format: OutputFormat | undefined): ((text: string) => string | undefined) | undefined {
  if (format?.type !== 'json_schema') return undefined;
  const validate = compile(format.schema);
  return (text) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return `Your answer is not valid JSON (${(error as Error).message}). Answer again with only a JSON value matching the required schema, with no other text.`;
    }
    if (validate(value)) return undefined;
    return `Your answer does not match the required JSON Schema: ${describe(validate.errors ?? [])}. Answer again with only a JSON value matching the schema.`;
  };
}
