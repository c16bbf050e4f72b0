import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { PAD_FRAGMENT } from '../../schema/pad.ts';
import { documentLength, fitsWithin, growthBound } from '../../sync/padSize.ts';

/** A pad of one paragraph, and the update each change to it makes. */
function pad(text: string) {
  const doc = new Y.Doc();
  const paragraph = new Y.XmlElement('paragraph');
  paragraph.setAttribute('id', '0123abcd');
  const yText = new Y.XmlText();
  doc.getXmlFragment(PAD_FRAGMENT).insert(0, [paragraph]);
  paragraph.insert(0, [yText]);
  yText.insert(0, text);
  const change = (run: () => void) => {
    let update: Uint8Array | null = null;
    const keep = (u: Uint8Array) => (update = u);
    doc.on('update', keep);
    run();
    doc.off('update', keep);
    return update!;
  };
  return { doc, yText, change };
}

describe('the live size limit', () => {
  it('bounds what an update adds: twice its text, the JSON of its marks, nothing for a deletion', () => {
    const { yText, change } = pad('Hello world');
    expect(growthBound(change(() => yText.insert(5, ' there')))).toBe(12);
    expect(growthBound(change(() => yText.delete(0, 6)))).toBe(0);
    const href = 'https://example.com/a/long/address';
    const link = change(() => yText.format(0, 5, { link: { href } }));
    expect(growthBound(link)).toBeGreaterThan(href.length);
  });

  it('lets an update through exactly when the pad stays within the limit', () => {
    const { doc, yText, change } = pad('a'.repeat(90));
    expect(documentLength(doc)).toBe(90);
    const copy = new Y.Doc();
    Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc));
    // Measured on a copy: 90 + 10 fits 100 although the bound (20) alone would not.
    const ten = change(() => yText.insert(0, 'b'.repeat(10)));
    expect(fitsWithin(copy, ten, 100)).toBe(true);
    expect(fitsWithin(copy, ten, 99)).toBe(false);
    // Nothing was applied to the pad checked.
    expect(documentLength(copy)).toBe(90);
  });

  it('counts what the pad took since it was last measured, from any origin, before letting a change through on the bounds', () => {
    // The pad as the server holds it, and an editor's copy whose changes it has not taken yet.
    const { doc: editor, yText, change } = pad('a'.repeat(10));
    const server = new Y.Doc();
    Y.applyUpdate(server, Y.encodeStateAsUpdate(editor));
    const one = change(() => yText.insert(0, 'c'));
    // Measured at 10 characters, far from the limit: the bounds answer.
    expect(fitsWithin(server, one, 1_000)).toBe(true);
    Y.applyUpdate(server, one);
    // The pad grows to 991 by a change that was never checked here (an API edit, another instance).
    const text = (server.getXmlFragment(PAD_FRAGMENT).get(0) as Y.XmlElement).get(0) as Y.XmlText;
    text.insert(0, 'b'.repeat(980));
    expect(documentLength(server)).toBe(991);
    const ten = change(() => yText.insert(0, 'd'.repeat(10)));
    expect(fitsWithin(server, ten, 1_000)).toBe(false);
    expect(fitsWithin(server, ten, 1_001)).toBe(true);
  });
});
