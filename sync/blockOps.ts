import * as Y from 'yjs';
import type { Node as PMNode } from '@tiptap/pm/model';
import { blockMarkdown } from '../schema/markdown.ts';
import { insertBlocks, padLength, parseBlocks, readBlock, replaceBlock } from './blocks.ts';

/**
 * One change to a pad's blocks, its Markdown already parsed: replace block `blockId` with `nodes`
 * (none: delete it), or insert `nodes` after block `after` ('start': first), under `id` if given.
 * `text` is the nodes' own Markdown, what a block holding them reads as.
 */
export type BlockOp =
  | { kind: 'edit'; blockId: string; nodes: PMNode[]; text: string }
  | { kind: 'insert'; after: string; nodes: PMNode[]; text: string; id?: string };
export type Conflict = { block_id: string; reason: 'changed_since_base' | 'missing' | 'anchor_missing'; text?: string };

/** What the pad must still look like for an operation to apply: guards against overwriting others. */
export type Guard = {
  /** Blocks someone else changed in a version after the caller's base. */
  touchedByOthers: ReadonlySet<string>;
  /** Each block's text at the latest version: a live text that differs is typing not yet versioned. */
  latest: ReadonlyMap<string, string>;
  /** A block's Markdown as the caller read it (links in link form), to see a block sent back unchanged. */
  asRead(text: string): string;
};

export const blockText = (node: PMNode) => blockMarkdown(node).trimEnd();

/** Markdown parsed once: its blocks and their Markdown as the pad will hold it. */
export function parsed(text: string): { nodes: PMNode[]; text: string } {
  const nodes = parseBlocks(text);
  return { nodes, text: nodes.map(blockText).join('\n\n') };
}

/**
 * Applies block operations to the live document (call inside one transaction). A block someone else
 * changed since the base version, one being typed in right now, or one that is gone, is left as it
 * is and reported as a conflict, with the text the caller sent.
 */
export function applyOps(fragment: Y.XmlFragment, ops: readonly (BlockOp & { sent?: string })[], guard: Guard) {
  const conflicts: Conflict[] = [];
  const changed: string[] = [];
  const elements = new Map<string, Y.XmlElement>();
  for (const child of fragment.toArray()) if (child instanceof Y.XmlElement) elements.set(String(child.getAttribute('id')), child);
  const remember = (ids: string[], index: number) => ids.forEach((id, i) => elements.set(id, fragment.get(index + i) as Y.XmlElement));
  // Inserts after one anchor keep their order: each goes after the one before it.
  const lastInsertAfter = new Map<string, string>();
  for (const op of ops) {
    const sent = op.sent ?? op.text;
    if (op.kind === 'edit') {
      const element = elements.get(op.blockId);
      if (!element) {
        conflicts.push({ block_id: op.blockId, reason: 'missing', text: sent });
        continue;
      }
      // Only the blocks an edit names are read from the live pad, whatever its size.
      const live = readBlock(element)?.text;
      const current = live ?? '';
      if (op.text === current || op.text === guard.asRead(current)) continue; // sent back as it is: keep it, links and all
      const typedSince = guard.latest.has(op.blockId) && guard.latest.get(op.blockId) !== live;
      if (guard.touchedByOthers.has(op.blockId) || typedSince) {
        conflicts.push({ block_id: op.blockId, reason: 'changed_since_base', text: sent });
        continue;
      }
      const index = fragment.toArray().indexOf(element);
      const ids = replaceBlock(fragment, element, op.nodes);
      elements.delete(op.blockId);
      remember(ids, index);
      changed.push(op.blockId, ...ids);
    } else {
      if (op.id && elements.has(op.id)) {
        // Re-inserting a block that is already back (an undo repeated): nothing to do twice.
        conflicts.push({ block_id: op.id, reason: 'changed_since_base', text: sent });
        continue;
      }
      const after = lastInsertAfter.get(op.after) ?? op.after;
      let index = 0;
      if (after !== 'start') {
        const element = elements.get(after);
        if (!element) {
          conflicts.push({ block_id: op.after, reason: 'anchor_missing', text: sent });
          continue;
        }
        index = fragment.toArray().indexOf(element) + 1;
      }
      const ids = insertBlocks(fragment, index, op.nodes, op.id);
      remember(ids, index);
      if (ids.length) lastInsertAfter.set(op.after, ids.at(-1)!);
      changed.push(...ids);
    }
  }
  return { conflicts, changed: [...new Set(changed)] };
}

/** The pad's length after the operations, counted on block Markdown. */
export function projectedLength(blocks: readonly { id: string; text: string }[], ops: readonly BlockOp[]): number {
  const texts = new Map(blocks.map((b) => [b.id, b.text]));
  for (const op of ops) {
    if (op.kind === 'edit') texts.set(op.blockId, op.text);
    else texts.set(`insert:${texts.size}`, op.text);
  }
  return padLength(texts.values());
}
