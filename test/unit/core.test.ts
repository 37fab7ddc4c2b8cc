import { describe, expect, it } from 'vitest';
import { costOf, parseModelCatalogue } from '#kit/config';
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
    expect(() => parseModelCatalogue('gpt-4.1@1/2')).toThrow(/provider\/name/);
  });

  it('reads prices after the last @, and only prices: a model id may hold @', () => {
    expect(parseModelCatalogue('openai/gpt-4.1-mini@0.4/1.6,vertex/claude@2025,vertex/claude@2025@3/15,openai/x@1/y')).toEqual([
      { provider: 'openai', name: 'gpt-4.1-mini', input_usd_per_mtok: 0.4, output_usd_per_mtok: 1.6 },
      { provider: 'vertex', name: 'claude@2025' },
      { provider: 'vertex', name: 'claude@2025', input_usd_per_mtok: 3, output_usd_per_mtok: 15 },
      { provider: 'openai', name: 'x@1/y' },
    ]);
  });
});

describe('costOf', () => {
  const catalogue = parseModelCatalogue('openai/priced@0.4/1.6,openai/free');

  it('prices usage by the catalogue, in USD', () => {
    expect(costOf(catalogue, { provider: 'openai', name: 'priced' }, { input_tokens: 1_000_000, output_tokens: 500_000 })).toBe(1.2);
    expect(costOf(catalogue, { provider: 'openai', name: 'priced' }, { input_tokens: 12, output_tokens: 3 })).toBe(0.0000096);
  });

  it('is undefined for a model the catalogue does not price or list', () => {
    expect(costOf(catalogue, { provider: 'openai', name: 'free' }, { input_tokens: 1, output_tokens: 1 })).toBeUndefined();
    expect(costOf(catalogue, { provider: 'anthropic', name: 'priced' }, { input_tokens: 1, output_tokens: 1 })).toBeUndefined();
  });
});

describe('newId', () => {
  it('makes distinct ids with the kind as prefix', () => {
    const ids = new Set(Array.from({ length: 100 }, () => newId('tok')));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^tok_[a-z2-7]{20}$/);
  });
});
