/** A line diff (longest common subsequence), laid out side by side. */

export interface DiffRow {
  left?: { number: number; text: string };
  right?: { number: number; text: string };
  kind: 'same' | 'changed' | 'removed' | 'added';
}

type Op = { kind: 'same' | 'removed' | 'added'; text: string };

function operations(left: string[], right: string[]): Op[] {
  // lengths[i][j]: the longest common subsequence of left[i..] and right[j..].
  const lengths = Array.from({ length: left.length + 1 }, () => new Uint32Array(right.length + 1));
  for (let i = left.length - 1; i >= 0; i--) {
    for (let j = right.length - 1; j >= 0; j--) {
      lengths[i]![j] = left[i] === right[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    if (left[i] === right[j]) {
      ops.push({ kind: 'same', text: left[i]! });
      i++;
      j++;
    } else if (lengths[i + 1]![j]! >= lengths[i]![j + 1]!) {
      ops.push({ kind: 'removed', text: left[i++]! });
    } else {
      ops.push({ kind: 'added', text: right[j++]! });
    }
  }
  while (i < left.length) ops.push({ kind: 'removed', text: left[i++]! });
  while (j < right.length) ops.push({ kind: 'added', text: right[j++]! });
  return ops;
}

/** Rows pairing the two texts' lines: unchanged lines side by side, a run of removals beside the additions that replaced it. */
export function sideBySide(leftText: string, rightText: string): DiffRow[] {
  const ops = operations(leftText.split('\n'), rightText.split('\n'));
  const rows: DiffRow[] = [];
  let leftNumber = 0;
  let rightNumber = 0;
  for (let k = 0; k < ops.length; ) {
    if (ops[k]!.kind === 'same') {
      const text = ops[k++]!.text;
      rows.push({ kind: 'same', left: { number: ++leftNumber, text }, right: { number: ++rightNumber, text } });
      continue;
    }
    const removed: string[] = [];
    const added: string[] = [];
    while (k < ops.length && ops[k]!.kind !== 'same') {
      const op = ops[k++]!;
      (op.kind === 'removed' ? removed : added).push(op.text);
    }
    for (let n = 0; n < Math.max(removed.length, added.length); n++) {
      const left = n < removed.length ? { number: ++leftNumber, text: removed[n]! } : undefined;
      const right = n < added.length ? { number: ++rightNumber, text: added[n]! } : undefined;
      rows.push({ kind: left && right ? 'changed' : left ? 'removed' : 'added', ...(left ? { left } : {}), ...(right ? { right } : {}) });
    }
  }
  return rows;
}
