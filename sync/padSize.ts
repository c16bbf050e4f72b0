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
 * Whether applying `update` keeps the pad within `max` characters. Far from the limit the bound
 * answers; near it, the update is applied to a copy of the pad and the result measured.
 */
export function fitsWithin(document: Y.Doc, update: Uint8Array, max: number): boolean {
  const bound = growthBound(update);
  if (bound === 0) return true;
  const now = documentLength(document);
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
