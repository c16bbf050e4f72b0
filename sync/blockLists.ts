/**
 * A version's block list, and what a version stores of it: only the blocks it changed. Each entry of
 * a delta names a block and either its removal, its new predecessor, or its new predecessor and text;
 * folding the deltas after a full list (a checkpoint) gives the list at any later version.
 */
export type VersionBlock = { readonly id: string; readonly text: string };

/** `[id]` removed; `[id, text]` rewritten in its place; `[id, after, text]` new, or moved after `after` (null: first). */
export type DeltaEntry = [id: string] | [id: string, text: string] | [id: string, after: string | null, text: string];
export type Delta = DeltaEntry[];

/**
 * The list a version records: the previous version's blocks, with the blocks in `mine` taken from
 * the live pad (its text, its place; gone if the live pad no longer has it). Whatever else the live
 * pad holds (another instance's change not committed yet, typing this instance does not version) is
 * left as the previous version has it: each writer versions only what it changed.
 */
export function nextBlocks(previous: readonly VersionBlock[], live: readonly VersionBlock[], mine: ReadonlySet<string>): VersionBlock[] {
  const result: VersionBlock[] = previous.filter((block) => !mine.has(block.id));
  const placed = new Set(result.map((block) => block.id));
  live.forEach((block, index) => {
    if (!mine.has(block.id) || placed.has(block.id)) return;
    // After the nearest block before it in the live pad that this version has.
    let at = 0;
    for (let j = index - 1; j >= 0; j--) {
      if (!placed.has(live[j]!.id)) continue;
      at = result.findIndex((b) => b.id === live[j]!.id) + 1;
      break;
    }
    result.splice(at, 0, { id: block.id, text: block.text });
    placed.add(block.id);
  });
  return result;
}

/** What `next` changes of `previous`, as the entries a version stores. */
export function deltaBetween(previous: readonly VersionBlock[], next: readonly VersionBlock[]): Delta {
  const before = new Map(previous.map((block, i) => [block.id, { text: block.text, after: i ? previous[i - 1]!.id : null }]));
  const delta: Delta = [];
  next.forEach((block, i) => {
    const after = i ? next[i - 1]!.id : null;
    const was = before.get(block.id);
    if (!was || was.after !== after) delta.push([block.id, after, block.text]);
    else if (was.text !== block.text) delta.push([block.id, block.text]);
    before.delete(block.id);
  });
  for (const id of before.keys()) delta.push([id]);
  return delta;
}

/** Blocks whose text or presence differs between two lists. */
export function changedBetween(previous: readonly VersionBlock[], next: readonly VersionBlock[]): string[] {
  const before = new Map(previous.map((block) => [block.id, block.text]));
  const now = new Set(next.map((block) => block.id));
  const changed: string[] = [];
  for (const block of next) if (before.get(block.id) !== block.text) changed.push(block.id);
  for (const block of previous) if (!now.has(block.id)) changed.push(block.id);
  return changed;
}

/** The list after a run of deltas, each on the list the one before it left. */
export function applyDeltas(blocks: readonly VersionBlock[], deltas: Iterable<Delta>): VersionBlock[] {
  const state = new Map<string, { after: string | null; text: string }>();
  blocks.forEach((block, i) => state.set(block.id, { after: i ? blocks[i - 1]!.id : null, text: block.text }));
  for (const delta of deltas) {
    for (const entry of delta) {
      if (entry.length === 1) state.delete(entry[0]);
      else if (entry.length === 2) {
        const rewritten = state.get(entry[0]);
        if (rewritten) rewritten.text = entry[1];
      } else state.set(entry[0], { after: entry[1], text: entry[2] });
    }
  }
  // Every block's predecessor is known: walk the chain from the start.
  const following = new Map<string | null, string>();
  for (const [id, { after }] of state) following.set(after, id);
  const list: VersionBlock[] = [];
  for (let id = following.get(null); id !== undefined && list.length < state.size; id = following.get(id)) {
    list.push({ id, text: state.get(id)!.text });
  }
  return list;
}
