import * as Y from 'yjs';
import { simpleDiffString } from 'lib0/diff';
import { updateYFragment } from '@tiptap/y-tiptap';
import type { Node as PMNode } from '@tiptap/pm/model';
import { BLOCK_ID_PATTERN, BLOCK_TYPES, newBlockId, padSchema } from '../schema/pad.ts';
import { blockMarkdown, parseMarkdown } from '../schema/markdown.ts';

/** A top-level block of a pad as agents see it: its id, its type and its Markdown. */
export type Block = { id: string; type: string; text: string; level?: number };

type NodeJSON = { type: string; attrs?: Record<string, unknown>; content?: NodeJSON[]; text?: string; marks?: { type: string; attrs?: Record<string, unknown> }[] };

/** Mark attributes in Y text are keyed by mark name, or `name--hash` where one type repeats. */
const markName = (key: string) => key.split('--')[0]!;

/**
 * A Y element as ProseMirror JSON, read without touching the Y document (the library converter
 * deletes nodes it does not know, so it may only ever see a copy).
 */
function elementJSON(element: Y.XmlElement): NodeJSON {
  const content: NodeJSON[] = [];
  for (const child of element.toArray()) {
    if (child instanceof Y.XmlElement) content.push(elementJSON(child));
    else if (child instanceof Y.XmlText) {
      for (const op of child.toDelta() as { insert: unknown; attributes?: Record<string, unknown> }[]) {
        if (typeof op.insert !== 'string' || op.insert === '') continue;
        const marks = Object.entries(op.attributes ?? {})
          .filter(([key]) => key !== 'ychange')
          .map(([key, attrs]) => ({ type: markName(key), ...(attrs && typeof attrs === 'object' && Object.keys(attrs).length ? { attrs: attrs as Record<string, unknown> } : {}) }));
        content.push({ type: 'text', text: op.insert, ...(marks.length ? { marks } : {}) });
      }
    }
  }
  const attrs = element.getAttributes() as Record<string, unknown>;
  return { type: element.nodeName, ...(Object.keys(attrs).length ? { attrs } : {}), ...(content.length ? { content } : {}) };
}

/** A top-level Y element as a ProseMirror node, or null when the schema cannot read it. */
function readNode(element: Y.XmlElement): PMNode | null {
  try {
    const node = padSchema.nodeFromJSON(elementJSON(element));
    node.check();
    return node;
  } catch {
    // A block written by a client with another schema: not ours to read or to delete.
    return null;
  }
}

/** The top-level Y elements and their ProseMirror nodes; elements the schema cannot read are left out. */
export function readNodes(fragment: Y.XmlFragment): { element: Y.XmlElement; node: PMNode }[] {
  const out: { element: Y.XmlElement; node: PMNode }[] = [];
  for (const child of fragment.toArray()) {
    const node = child instanceof Y.XmlElement ? readNode(child) : null;
    if (node) out.push({ element: child as Y.XmlElement, node });
  }
  return out;
}

/** Frozen: a block read once may be handed to many readers. */
const toBlock = (node: PMNode): Block =>
  Object.freeze({
    id: String(node.attrs.id ?? ''),
    type: node.type.name,
    text: blockMarkdown(node).trimEnd(),
    ...(node.type.name === 'heading' ? { level: Number(node.attrs.level) } : {}),
  });

/**
 * Blocks already read from each live fragment: a top-level element is read again only once something
 * in it changed, so reading a large pad costs what changed since the last read, not its length.
 */
const readCache = new WeakMap<Y.XmlFragment, WeakMap<Y.XmlElement, Block | null>>();

function cacheOf(fragment: Y.XmlFragment): WeakMap<Y.XmlElement, Block | null> | null {
  if (!fragment.doc) return null;
  let cache = readCache.get(fragment);
  if (!cache) {
    const entries = new WeakMap<Y.XmlElement, Block | null>();
    fragment.observeDeep((events) => {
      for (const event of events) {
        let target: Y.AbstractType<unknown> = event.target;
        while (target.parent && target.parent !== fragment) target = target.parent as Y.AbstractType<unknown>;
        if (target instanceof Y.XmlElement) entries.delete(target);
      }
    });
    readCache.set(fragment, entries);
    cache = entries;
  }
  return cache;
}

/**
 * Whether the running transaction (if any) changed something inside this top-level element: the
 * observers that keep the cache right run only once it ends, so until then such an element is read
 * afresh, and the others still come from the cache.
 */
function changedNow(element: Y.XmlElement): boolean {
  const transaction = element.doc?._transaction;
  if (!transaction) return false;
  for (const type of transaction.changed.keys()) {
    let top = type as Y.AbstractType<unknown>;
    while (top.parent && top.parent !== element.parent) top = top.parent as Y.AbstractType<unknown>;
    if (top === element) return true;
  }
  return false;
}

function cachedBlock(element: Y.XmlElement, cache: WeakMap<Y.XmlElement, Block | null> | null): Block | null {
  const usable = cache && !changedNow(element);
  if (usable && cache.has(element)) return cache.get(element)!;
  const node = readNode(element);
  const block = node && toBlock(node);
  if (usable) cache.set(element, block);
  return block;
}

export function readBlocks(fragment: Y.XmlFragment): Block[] {
  const cache = cacheOf(fragment);
  const blocks: Block[] = [];
  for (const child of fragment.toArray()) {
    const block = child instanceof Y.XmlElement ? cachedBlock(child, cache) : null;
    if (block) blocks.push(block);
  }
  return blocks;
}

/** One top-level element as a block, without reading the rest of the pad; null when unreadable. */
export function readBlock(element: Y.XmlElement): Block | null {
  const fragment = element.parent;
  return cachedBlock(element, fragment instanceof Y.XmlFragment ? cacheOf(fragment) : null);
}

/** A pad's length as its size limit counts it: its blocks' Markdown, with a blank line between two. */
export function padLength(texts: Iterable<string>): number {
  let length = 0;
  let count = 0;
  for (const text of texts) {
    if (!text) continue;
    length += text.length;
    count++;
  }
  return count === 0 ? 0 : length + 2 * (count - 1);
}

/** Markdown as top-level blocks, each without an id yet. */
export function parseBlocks(text: string): PMNode[] {
  // The schema wants one block at least, so the parser fills an empty text with an empty paragraph.
  if (text.trim() === '') return [];
  const doc = parseMarkdown(text);
  const blocks: PMNode[] = [];
  doc.forEach((node) => blocks.push(node));
  return blocks;
}

const withId = (node: PMNode, id: string) => node.type.create({ ...node.attrs, id }, node.content, node.marks);

const meta = () => ({ mapping: new Map(), isOMark: new Map() });

/** Inserts blocks at `index` of the fragment, giving each a fresh id unless one is given. */
export function insertBlocks(fragment: Y.XmlFragment, index: number, nodes: PMNode[], firstId?: string): string[] {
  const ids: string[] = [];
  nodes.forEach((node, i) => {
    const id = i === 0 && firstId ? firstId : newBlockId();
    const element = new Y.XmlElement(node.type.name);
    fragment.insert(index + i, [element]);
    updateYFragment(fragment.doc!, element, withId(node, id), meta());
    ids.push(id);
  });
  return ids;
}

/** The Y text of a paragraph that holds one run of text without marks (or none), and that text. */
function plainParagraph(element: Y.XmlElement): { ytext: Y.XmlText; text: string } | null {
  if (element.nodeName !== 'paragraph' || element.length !== 1 || Object.keys(element.getAttributes()).some((key) => key !== 'id')) return null;
  const ytext = element.get(0);
  if (!(ytext instanceof Y.XmlText)) return null;
  const delta = ytext.toDelta() as { insert: unknown; attributes?: object }[];
  if (delta.length > 1 || (delta.length === 1 && (typeof delta[0]!.insert !== 'string' || delta[0]!.attributes))) return null;
  return { ytext, text: delta.length ? (delta[0]!.insert as string) : '' };
}

/**
 * A plain paragraph edited into another plain paragraph, the most common edit of all: only the
 * characters between the common start and the common end change, as \`updateYFragment\` would change
 * them, without building its mapping of the whole element. False when either side is not plain.
 */
function replacePlainText(element: Y.XmlElement, node: PMNode): boolean {
  const only = node.childCount === 1 ? node.firstChild! : null;
  if (node.type.name !== 'paragraph' || node.childCount > 1 || (only && (!only.isText || only.marks.length))) return false;
  const current = plainParagraph(element);
  if (!current) return false;
  // The diff y-prosemirror takes too (it never splits a surrogate pair).
  const { index, remove, insert } = simpleDiffString(current.text, only?.text ?? '');
  if (remove) current.ytext.delete(index, remove);
  if (insert) current.ytext.insert(index, insert);
  return true;
}

/**
 * Replaces one block with the given nodes. One node of the same type is merged into the existing
 * element character by character, so concurrent typing elsewhere in the document is untouched;
 * otherwise the element is replaced (the first new block keeps the id). No nodes deletes it.
 */
export function replaceBlock(fragment: Y.XmlFragment, element: Y.XmlElement, nodes: PMNode[]): string[] {
  const id = String(element.getAttribute('id') ?? newBlockId());
  const [first, ...rest] = nodes;
  if (first && rest.length === 0 && first.type.name === element.nodeName) {
    if (!replacePlainText(element, first)) updateYFragment(fragment.doc!, element, withId(first, id), meta());
    return [id];
  }
  const index = fragment.toArray().indexOf(element);
  fragment.delete(index, 1);
  return insertBlocks(fragment, index, nodes, id);
}

/** Gives top-level blocks that lack one (or share one) a fresh id. Returns whether anything changed. */
export function ensureBlockIds(fragment: Y.XmlFragment): boolean {
  const seen = new Set<string>();
  let changed = false;
  for (const child of fragment.toArray()) {
    if (!(child instanceof Y.XmlElement) || !BLOCK_TYPES.includes(child.nodeName)) continue;
    const id = child.getAttribute('id');
    if (typeof id === 'string' && BLOCK_ID_PATTERN.test(id) && !seen.has(id)) {
      seen.add(id);
      continue;
    }
    const fresh = newBlockId();
    child.setAttribute('id', fresh);
    seen.add(fresh);
    changed = true;
  }
  return changed;
}
