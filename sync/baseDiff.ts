/**
 * A whole new text against the text at the base version, as changes to blocks: `edit` gives block
 * `blockId` the new block at `index` (none: deletes it), `insert` puts the new block at `index` after
 * the block `after` ('start': first).
 */
export type BaseChange = { kind: 'edit'; blockId: string; index: number | null } | { kind: 'insert'; after: string; index: number };

/** A block of the base version: its text, and the form its reader may have had it in (links as `[link to <host>]`). */
export type BaseBlock = { id: string; text: string; read?: string };

/** Past this many cells the middle of a diff is paired up by position instead of by LCS. */
const LCS_CELLS = 4_000_000;

/**
 * Blocks that match, in either form (by longest common subsequence, after the common head and tail) are untouched,
 * so only what the caller changed is applied; in a run of removed and added blocks between two
 * matches, they are paired up as edits so a rewritten paragraph keeps its id.
 */
export function diffAgainstBase(base: readonly BaseBlock[], next: readonly string[]): BaseChange[] {
  const same = (block: BaseBlock, text: string | undefined) => block.text === text || (block.read !== undefined && block.read === text);
  let head = 0;
  while (head < base.length && head < next.length && same(base[head]!, next[head])) head++;
  let tailBase = base.length;
  let tailNext = next.length;
  while (tailBase > head && tailNext > head && same(base[tailBase - 1]!, next[tailNext - 1])) {
    tailBase--;
    tailNext--;
  }
  const middle = base.slice(head, tailBase);
  const n = middle.length;
  const m = tailNext - head;
  const lcs: number[][] = n * m <= LCS_CELLS ? Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0)) : [];
  for (let i = n - 1; lcs.length && i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = same(middle[i]!, next[head + j]) ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const changes: BaseChange[] = [];
  let anchor = head > 0 ? base[head - 1]!.id : 'start';
  const removed: string[] = [];
  const added: number[] = [];
  const pairUp = () => {
    const pairs = Math.min(removed.length, added.length);
    for (let k = 0; k < pairs; k++) {
      changes.push({ kind: 'edit', blockId: removed[k]!, index: added[k]! });
      anchor = removed[k]!;
    }
    for (const id of removed.slice(pairs)) changes.push({ kind: 'edit', blockId: id, index: null });
    for (const index of added.slice(pairs)) changes.push({ kind: 'insert', after: anchor, index });
    removed.length = 0;
    added.length = 0;
  };
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (lcs.length && i < n && j < m && same(middle[i]!, next[head + j])) {
      pairUp();
      anchor = middle[i]!.id;
      i++;
      j++;
    } else if (j < m && (i === n || !lcs.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      added.push(head + j++);
    } else {
      removed.push(middle[i++]!.id);
    }
  }
  pairUp();
  return changes;
}
