import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '#core/errors';
import { createRedactor, resolveReferences } from '#functions/agent/secrets';

describe('createRedactor', () => {
  it('replaces every value in every string of a JSON value, keys included, however short', () => {
    const redactor = createRedactor(new Map([['API', 'sk-live-0123456789'], ['PIN', '42']]));

    const redacted = redactor.redact({
      headers: { authorization: 'Bearer sk-live-0123456789' },
      list: ['a sk-live-0123456789 b sk-live-0123456789', 42, true, null],
      'key-42': 'pin 42',
    });

    expect(redacted).toEqual({
      headers: { authorization: 'Bearer [REDACTED:API]' },
      list: ['a [REDACTED:API] b [REDACTED:API]', 42, true, null],
      'key-[REDACTED:PIN]': 'pin [REDACTED:PIN]',
    });
  });

  it('finds a value inside JSON text, where its quotes and backslashes are escaped', () => {
    const redactor = createRedactor(new Map([['Q', 'a"b\\c']]));
    const toolResult = JSON.stringify({ stdout: 'got a"b\\c' });

    expect(redactor.redact(toolResult)).toBe('{"stdout":"got [REDACTED:Q]"}');
  });

  it('cuts overlapping values out whole, leaving no fragment of either', () => {
    const redactor = createRedactor(new Map([['LONG', 'abcdef'], ['SHORT', 'xabc']]));

    expect(redactor.redact('<xabcdef>')).toBe('<[REDACTED:SHORT][REDACTED:LONG]>');
  });

  it('is stable when applied twice, even for values found inside its own markers', () => {
    const redactor = createRedactor(new Map([['A', 'A'], ['RED', 'RED']]));
    const once = redactor.redact('A RED');

    expect(once).toBe('[REDACTED:A] [REDACTED:RED]');
    expect(redactor.redact(once)).toBe(once);
  });

  it('serializes objects with toJSON before redacting them', () => {
    const redactor = createRedactor(new Map([['Y', '2030']]));

    expect(redactor.redact({ at: new Date('2030-01-02T00:00:00.000Z') })).toEqual({ at: '[REDACTED:Y]-01-02T00:00:00.000Z' });
  });

  it('returns values unchanged when there are no secrets', () => {
    const value = { a: ['b'] };

    expect(createRedactor(new Map()).redact(value)).toBe(value);
  });
});

describe('resolveReferences', () => {
  const secrets = new Map([['OPENAI', 'sk-1'], ['MCP', 'tok$&en']]);

  it('substitutes every reference, taking values literally', () => {
    expect(resolveReferences('Bearer {{secret:MCP}} / {{secret:OPENAI}} / {{secret:MCP}}', secrets)).toBe('Bearer tok$&en / sk-1 / tok$&en');
    expect(resolveReferences('no references', secrets)).toBe('no references');
  });

  it('refuses a reference to a secret the run does not hold', () => {
    expect(() => resolveReferences('{{secret:GONE}}', secrets)).toThrow(InvalidInputError);
    expect(() => resolveReferences('{{secret:GONE}}', secrets)).toThrow(/GONE/);
  });

  it('refuses a malformed reference', () => {
    expect(() => resolveReferences('{{secret:bad name}}', secrets)).toThrow(/malformed secret reference/);
  });
});
