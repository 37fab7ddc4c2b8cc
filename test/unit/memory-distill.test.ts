import { describe, expect, it } from 'vitest';
import { MAX_DISTILLED, parseMemoryList } from '#core/distill-memories';
import { MAX_MEMORY_CHARS, PROMPT_MEMORY_BYTES, withinBudget } from '#functions/agent/tools/memory';
import type { Memory } from '#core/model';

describe('parseMemoryList', () => {
  it.each([
    ['a bare array', '["a", "b"]', ['a', 'b']],
    ['a fenced array', 'Here you go:\n```json\n["a"]\n```\nThanks', ['a']],
    ['an array inside prose', 'Memories: ["a", "b"] -- done', ['a', 'b']],
    ['an object holding the list', '{"memories": ["a"]}', ['a']],
    ['objects with content, memory or fact', '[{"content": "a"}, {"memory": "b"}, {"fact": "c"}, {"other": "d"}]', ['a', 'b', 'c']],
    ['an empty list', '[]', []],
    ['blanks and duplicates', '["  a ", "", "a", 3, null]', ['a']],
  ])('reads %s', (_name, text, expected) => {
    expect(parseMemoryList(text)).toEqual(expected);
  });

  it.each([['prose', 'Nothing to remember.'], ['broken JSON', '["a", '], ['a number', '42'], ['an object without a list', '{"a": 1}']])(
    'finds no list in %s',
    (_name, text) => {
      expect(parseMemoryList(text)).toBeUndefined();
    },
  );

  it('keeps at most MAX_DISTILLED memories, each cut to MAX_MEMORY_CHARS', () => {
    const many = Array.from({ length: MAX_DISTILLED + 5 }, (_, i) => `fact ${i}`);
    expect(parseMemoryList(JSON.stringify(many))).toEqual(many.slice(0, MAX_DISTILLED));
    expect(parseMemoryList(JSON.stringify(['x'.repeat(MAX_MEMORY_CHARS + 10)]))![0]).toHaveLength(MAX_MEMORY_CHARS);
  });
});

describe('withinBudget', () => {
  const memory = (id: string, content: string): Memory => ({
    id, content, status: 'active', created_at: '2025-01-01T00:00:00.000Z', source_session: 's', source_invocation: 'k',
  });

  it('keeps the newest memories up to the byte budget and stops at the first that does not fit', () => {
    const half = 'é'.repeat(PROMPT_MEMORY_BYTES / 4); // two bytes each: half the budget
    const memories = [memory('m3', half), memory('m2', half), memory('m1', 'small')];

    expect(withinBudget(memories).map((m) => m.id)).toEqual(['m3', 'm2']);
    expect(withinBudget([memory('m1', 'small')]).map((m) => m.id)).toEqual(['m1']);
  });
});
