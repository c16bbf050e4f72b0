import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { PAD_FRAGMENT } from '../../schema/pad.ts';
import { addsContent, insertedChars } from '../../sync/typedText.ts';

/** A pad of one paragraph, the update each change to it makes, and a second copy that has seen none of the changes. */
function pad(text: string) {
  const doc = new Y.Doc();
  const paragraph = new Y.XmlElement('paragraph');
  const yText = new Y.XmlText();
  doc.getXmlFragment(PAD_FRAGMENT).insert(0, [paragraph]);
  paragraph.insert(0, [yText]);
  yText.insert(0, text);
  const copy = new Y.Doc();
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc));
  // What a client's sync sends after a change: everything past the state before it.
  const change = (run: () => void) => {
    const before = Y.encodeStateVector(doc);
    run();
    return Y.encodeStateAsUpdate(doc, before);
  };
  return { doc, copy, paragraph, yText, change };
}

describe('text typed live', () => {
  it('counts the characters an update inserts, in UTF-16 units as the tools count text; deleting and formatting count none', () => {
    const { yText, change } = pad('Hello world');
    expect(insertedChars(change(() => yText.insert(5, ' there')))).toBe(6);
    expect(insertedChars(change(() => yText.insert(0, '😀é')))).toBe(3);
    expect(insertedChars(change(() => yText.delete(0, 6)))).toBe(0);
    expect(insertedChars(change(() => yText.format(0, 4, { bold: true })))).toBe(0);
  });

  it('counts the text inside a new paragraph, which has no event of its own', () => {
    const { doc, change } = pad('First.');
    const update = change(() => {
      const paragraph = new Y.XmlElement('paragraph');
      doc.getXmlFragment(PAD_FRAGMENT).insert(1, [paragraph]);
      paragraph.insert(0, [new Y.XmlText('Second one.')]);
    });
    expect(insertedChars(update)).toBe('Second one.'.length);
  });

  it('leaves out what the document already holds, and tells a deletion from an addition', () => {
    const { copy, yText, change } = pad('Hello');
    const typed = change(() => yText.insert(5, ' world'));
    const deleted = change(() => yText.delete(0, 1));
    expect(insertedChars(typed, copy)).toBe(6);
    expect(addsContent(typed, copy)).toBe(true);
    expect(addsContent(deleted, copy)).toBe(false);
    Y.applyUpdate(copy, typed);
    expect(insertedChars(typed, copy)).toBe(0);
    expect(addsContent(typed, copy)).toBe(false);
  });
});
