import { describe, expect, it } from 'vitest';
import { textPrefix } from '#core/traces';

describe('textPrefix', () => {
  it('keeps whole characters only when the cut falls inside one', () => {
    const bytes = Buffer.from('ab€😀', 'utf8'); // 2 + 3 + 4 bytes

    expect(textPrefix(bytes, 2)).toBe('ab');
    expect(textPrefix(bytes, 3)).toBe('ab');
    expect(textPrefix(bytes, 4)).toBe('ab');
    expect(textPrefix(bytes, 5)).toBe('ab€');
    expect(textPrefix(bytes, 8)).toBe('ab€');
    expect(textPrefix(bytes, 9)).toBe('ab€😀');
  });

  it('returns text shorter than the bound whole', () => {
    expect(textPrefix(Buffer.from('{"a":1}'), 4096)).toBe('{"a":1}');
  });
});
