import * as Y from 'yjs';

/** The part of an item `document` does not hold yet (all of it without a document), in its units. */
function unknownPart(item: Y.Item, document: Y.Doc | undefined): number {
  if (!document) return item.length;
  const known = Y.getState(document.store, item.id.client);
  return Math.max(0, item.id.clock + item.length - Math.max(item.id.clock, known));
}

/**
 * The characters of text an update inserts: its content strings (in UTF-16 units, as the tools count
 * a pad's text), leaving out what `document` already holds. Deleting, formatting and new empty
 * elements add none.
 */
export function insertedChars(update: Uint8Array, document?: Y.Doc): number {
  let chars = 0;
  for (const struct of Y.decodeUpdate(update).structs) {
    if (struct instanceof Y.Item && struct.content instanceof Y.ContentString) chars += unknownPart(struct, document);
  }
  return chars;
}

/** Whether an update brings `document` anything new besides deletions. */
export function addsContent(update: Uint8Array, document: Y.Doc): boolean {
  for (const struct of Y.decodeUpdate(update).structs) {
    if (struct instanceof Y.Item && !(struct.content instanceof Y.ContentDeleted) && unknownPart(struct, document) > 0) return true;
  }
  return false;
}
