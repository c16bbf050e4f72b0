import * as Y from 'yjs';
import { PAD_FRAGMENT } from '../schema/pad.ts';
import { padLength, readBlocks } from './blocks.ts';

/** Markdown syntax an element (a block, a list item, a hard break) can add around its text, at most. */
const ELEMENT_SYNTAX = 16;

/**
 * The most Markdown an update can add to a pad, without applying it: twice each character of text
 * it inserts (an escape at most doubles one), the JSON of each attribute and mark it sets (a link's
 * address is written out whole), and a little for each element. Deletions are not taken off, so a
 * change that only deletes or reformats adds nothing.
 */
export function growthBound(update: Uint8Array): number {
  let bound = 0;
  for (const struct of Y.decodeUpdate(update).structs) {
    if (!(struct instanceof Y.Item)) continue;
    const content = struct.content;
    if (content instanceof Y.ContentString) bound += 2 * content.str.length;
    else if (content instanceof Y.ContentType) bound += ELEMENT_SYNTAX;
    else if (content instanceof Y.ContentFormat) bound += content.key.length + JSON.stringify(content.value ?? null).length + ELEMENT_SYNTAX;
    else if (content instanceof Y.ContentAny) bound += JSON.stringify(content.arr).length;
    else if (content instanceof Y.ContentEmbed) bound += JSON.stringify(content.embed).length;
    else if (!(content instanceof Y.ContentDeleted)) bound += content.getLength() * ELEMENT_SYNTAX;
  }
  return bound;
}

/** The pad's length now, as its limit counts it. */
export function documentLength(document: Y.Doc): number {
  return padLength(readBlocks(document.getXmlFragment(PAD_FRAGMENT)).map((block) => block.text));
}

/**
 * What is known of each live document's length without reading it: its length when last measured,
 * plus the growth bound of every update it took since (from any origin). A change is checked against
 * that sum, so typing far from the limit costs the decoding of the keystroke, not a read of the pad.
 */
type KnownLength = { measured: number; growth: number };
const knownLengths = new WeakMap<Y.Doc, KnownLength>();

function knownLength(document: Y.Doc): KnownLength {
  let known = knownLengths.get(document);
  if (!known) {
    const fresh: KnownLength = (known = { measured: documentLength(document), growth: 0 });
    document.on('update', (update: Uint8Array) => {
      fresh.growth += growthBound(update);
    });
    knownLengths.set(document, fresh);
  }
  return known;
}

/**
 * Whether applying `update` keeps the pad within `max` characters. Far from the limit the bounds
 * answer (what is known of the pad's length, and the update's growth); near it, the pad is measured
 * again, and when that is not enough the update is applied to a copy of the pad and the result measured.
 */
export function fitsWithin(document: Y.Doc, update: Uint8Array, max: number): boolean {
  const bound = growthBound(update);
  if (bound === 0) return true;
  const known = knownLength(document);
  if (known.measured + known.growth + bound <= max) return true;
  const now = documentLength(document);
  known.measured = now;
  known.growth = 0;
  if (now + bound <= max) return true;
  const copy = new Y.Doc();
  try {
    Y.applyUpdate(copy, Y.encodeStateAsUpdate(document));
    Y.applyUpdate(copy, update);
    const after = documentLength(copy);
    // A pad already past the limit (a limit lowered since) may still shrink.
    return after <= max || after <= now;
  } finally {
    copy.destroy();
  }
}
