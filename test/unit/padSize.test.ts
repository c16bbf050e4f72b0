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
});
