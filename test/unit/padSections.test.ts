import { describe, expect, it } from 'vitest';
import { inOrder, sectionChange, sectionOfBlocks, sectionRows } from '../../sync/padSections.ts';

const blocks = (...texts: [string, string][]) => texts.map(([id, text]) => ({ id, text }));

/** The sections search keeps, from a version's block list, and what a version rewrites of them. */
describe('pad sections', () => {
  const pad = blocks(['a', 'Opening words.'], ['b', '# Goals'], ['c', 'Ship it.'], ['d', '\\# not a heading'], ['e', '## Risks'], ['f', 'None.']);

  it('are a heading and its blocks, with "Introduction" before the first heading, each after the one before', () => {
    expect(sectionRows(pad)).toEqual([
      { id: 'a', after: null, title: 'Introduction', level: 0, body: 'Opening words.' },
      { id: 'b', after: 'a', title: 'Goals', level: 1, body: 'Ship it.\n\n\\# not a heading' },
      { id: 'e', after: 'b', title: 'Risks', level: 2, body: 'None.' },
    ]);
    expect(sectionRows([])).toEqual([]);
    expect(sectionRows(blocks(['h', '###'], ['p', 'Text.']))).toEqual([{ id: 'h', after: null, title: '', level: 3, body: 'Text.' }]);
  });

  it('a version writes only the sections it changed, and names the ones gone', () => {
    const edited = pad.map((block) => (block.id === 'f' ? { ...block, text: 'Some.' } : block));
    expect(sectionChange(pad, edited, false)).toEqual({ rows: [], changed: [{ id: 'e', after: 'b', title: 'Risks', level: 2, body: 'Some.' }], removed: [], whole: false, textBehind: true });
    // A heading taken out: its blocks join the section before; a section put in first moves one neighbour.
    const merged = pad.filter((block) => block.id !== 'e');
    expect(sectionChange(pad, merged, false)).toEqual({
      rows: [],
      changed: [{ id: 'b', after: 'a', title: 'Goals', level: 1, body: 'Ship it.\n\n\\# not a heading\n\nNone.' }],
      removed: ['e'],
      whole: false,
      textBehind: true,
    });
    // A new section goes in whole; one that only moved has no text to follow.
    const first = [{ id: 'z', text: '# Before all' }, ...pad.slice(1)];
    const change = sectionChange(pad, first, false);
    expect(change.rows.map((row) => row.id)).toEqual(['z']);
    expect(change.changed.map((row) => row.id)).toEqual(['b']);
    expect(change.textBehind).toBe(false);
    expect(change.removed).toEqual(['a']);
    // A checkpoint writes every section.
    expect(sectionChange(pad, pad, true).rows).toHaveLength(3);
    expect(sectionChange(pad, pad, false)).toMatchObject({ rows: [], changed: [] });
  });

  it('name each block’s section: its heading, or the first block before any heading', () => {
    expect([...sectionOfBlocks(pad)]).toEqual([['a', 'a'], ['b', 'b'], ['c', 'b'], ['d', 'b'], ['e', 'e'], ['f', 'e']]);
    expect([...sectionOfBlocks(blocks(['h', '# Top'], ['p', 'Text.']))]).toEqual([['h', 'h'], ['p', 'h']]);
    expect(sectionOfBlocks([]).size).toBe(0);
  });

  it('come back in order from the section each names before it', () => {
    const rows = sectionRows(pad);
    expect(inOrder([rows[2]!, rows[0]!, rows[1]!]).map((row) => row.id)).toEqual(['a', 'b', 'e']);
  });
});
