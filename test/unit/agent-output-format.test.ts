import { describe, expect, it } from 'vitest';
import { answerValidator, checkOutputFormat } from '#functions/agent/output-format';

const schema = { type: 'object', properties: { n: { type: 'integer' }, day: { type: 'string', format: 'date' } }, required: ['n'] };

describe('answerValidator', () => {
  it('has nothing to check for text answers', () => {
    expect(answerValidator(undefined)).toBeUndefined();
    expect(answerValidator({ type: 'text' })).toBeUndefined();
  });

  it('accepts a valid answer and explains a wrong one', () => {
    const validate = answerValidator({ type: 'json_schema', schema })!;
    expect(validate('{"n": 1, "day": "2026-11-22"}')).toBeUndefined();
    expect(validate('```json\n{"n": 1}\n```')).toMatch(/not valid JSON/);
    expect(validate('{"n": 1.5, "day": "tomorrow"}')).toMatch(/\/n must be integer; \/day must match format "date"/);
    expect(validate('{}')).toMatch(/\(the whole value\) must have required property 'n'/);
  });

  it('follows the dialect a schema declares', () => {
    // A tuple as an `items` array is draft-07; 2020-12 (the default) spells it `prefixItems`.
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'string' }, { type: 'integer' }] };
    expect(() => checkOutputFormat({ type: 'json_schema', schema: draft7 })).not.toThrow();
    expect(answerValidator({ type: 'json_schema', schema: draft7 })!('["a", "b"]')).toMatch(/\/1 must be integer/);
    const { $schema: _, ...undeclared } = draft7;
    expect(() => checkOutputFormat({ type: 'json_schema', schema: undeclared })).toThrow(/not a usable JSON Schema/);
  });

  it('refuses schemas too large to be honest', () => {
    const huge = { type: 'object', description: 'x'.repeat(70 * 1024) };
    expect(() => checkOutputFormat({ type: 'json_schema', schema: huge })).toThrow(/larger than 64 KiB/);
  });
});
