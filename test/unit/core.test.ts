import { describe, expect, it } from 'vitest';
import { parseModelCatalogue } from '#kit/config';
import { newId } from '#kit/ids';
import { maskSecret } from '#core/secrets';

describe('maskSecret', () => {
  it('shows the last 4 characters of a value of 16 or more', () => {
    expect(maskSecret('sk-1234567890abcd')).toBe('****abcd');
    expect(maskSecret('0123456789abcdef')).toBe('****cdef');
  });

  it('shows nothing of a shorter value', () => {
    expect(maskSecret('0123456789abcde')).toBe('****');
    expect(maskSecret('x')).toBe('****');
  });
});

describe('parseModelCatalogue', () => {
  it('splits provider from name at the first slash only', () => {
    expect(parseModelCatalogue('openai/gpt-4.1, bedrock/us.anthropic.claude:0,openai/meta/llama')).toEqual([
      { provider: 'openai', name: 'gpt-4.1' },
      { provider: 'bedrock', name: 'us.anthropic.claude:0' },
      { provider: 'openai', name: 'meta/llama' },
    ]);
  });

  it('refuses an entry without a provider', () => {
    expect(() => parseModelCatalogue('gpt-4.1')).toThrow(/provider\/name/);
  });
});

describe('newId', () => {
  it('makes distinct ids with the kind as prefix', () => {
    const ids = new Set(Array.from({ length: 100 }, () => newId('tok')));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^tok_[a-z2-7]{20}$/);
  });
});
