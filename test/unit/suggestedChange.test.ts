import { describe, expect, it } from 'vitest';
import { changedChars, isSmall, linksIn, markdownBlocks, suggestedChange } from '../../server/core/checked/suggestedChange.ts';
import { sectionOfBlocks } from '../../sync/padSections.ts';

/** A pad's blocks at a base version: two sections, one with a link. */
const BASE = [
  { id: 'h1', text: '# Plan' },
  { id: 'p1', text: 'We meet on Monday at the old hall by the river, as every week.' },
  { id: 'p2', text: 'Read [the notes](https://example.org/notes) first.' },
  { id: 'h2', text: '# Budget' },
  { id: 'p3', text: 'Ten coins for tea, twenty for the room.' },
];
const text = (blocks: readonly { text: string }[]) => blocks.map((b) => b.text).join('\n\n');

describe('suggestedChange', () => {
  it('applies block edits and inserts to the base, naming the blocks and sections it changes', () => {
    const change = suggestedChange(BASE, {
      edits: [{ block_id: 'p3', text: 'Ten coins for tea, thirty for the room.' }],
      inserts: [{ after: 'p1', text: 'Bring chairs.' }],
    });
    expect(change.text).toBe(text([BASE[0]!, BASE[1]!, { text: 'Bring chairs.' }, BASE[2]!, BASE[3]!, { text: 'Ten coins for tea, thirty for the room.' }]));
    expect(change.changed.sort()).toEqual(['+p1', 'p3']);
    expect(change.sections.sort()).toEqual(['h1', 'h2']);
    expect(change.blocks).toContainEqual({ block_id: 'p3', change: 'changed', text: 'Ten coins for tea, thirty for the room.', before: 'Ten coins for tea, twenty for the room.' });
    expect(change.summary).toMatch(/^1 block changed, 1 block added: /);
  });

  it('takes a whole text as the same change as the blocks it differs in', () => {
    const whole = suggestedChange(BASE, { text: text(BASE).replace('twenty', 'thirty') });
    expect(whole.changed).toEqual(['p3']);
    expect(whole.sections).toEqual(['h2']);
    expect(whole.small).toBe(true);
  });

  it('changes nothing when the text is the base', () => {
    const same = suggestedChange(BASE, { text: text(BASE) });
    expect(same.changed).toEqual([]);
    expect(same.small).toBe(false);
  });

  it('removes a block whose edit is empty', () => {
    const change = suggestedChange(BASE, { edits: [{ block_id: 'p1', text: '' }], inserts: [] });
    expect(change.blocks).toEqual([{ block_id: 'p1', change: 'removed', text: '', before: BASE[1]!.text }]);
    expect(change.small).toBe(false);
  });

  it('refuses a block id the base does not have', () => {
    expect(() => suggestedChange(BASE, { edits: [{ block_id: 'nope', text: 'x' }], inserts: [] })).toThrow(/not in the version you read/);
  });
});

describe('small (SPEC part 3: under 30% of each section, no new heading, no link removed)', () => {
  const small = (edit: Parameters<typeof suggestedChange>[1]) => suggestedChange(BASE, edit).small;

  it('is small for a few words in a long section', () => {
    expect(small({ edits: [{ block_id: 'p1', text: 'We meet on Tuesday at the old hall by the river, as every week.' }], inserts: [] })).toBe(true);
  });
  it('is not small at 30% of a section or more', () => {
    expect(small({ edits: [{ block_id: 'p3', text: 'Nothing at all for anything.' }], inserts: [] })).toBe(false);
  });
  it('counts each section on its own: a small change in one and a large one in another is not small', () => {
    expect(
      small({
        edits: [
          { block_id: 'p1', text: 'We meet on Tuesday at the old hall by the river, as every week.' },
          { block_id: 'p3', text: 'Free.' },
        ],
        inserts: [],
      }),
    ).toBe(false);
  });
  it('is not small with a new heading', () => {
    expect(small({ edits: [], inserts: [{ after: 'p3', text: '# Extra' }] })).toBe(false);
  });
  it('is not small when a link goes', () => {
    expect(small({ edits: [{ block_id: 'p2', text: 'Read the notes first.' }], inserts: [] })).toBe(false);
    expect(small({ edits: [{ block_id: 'p2', text: 'Read [the new notes](https://example.org/notes) first.' }], inserts: [] })).toBe(true);
  });
  it('isSmall reads sections from the base', () => {
    const blocks = [{ block_id: 'p3', change: 'changed' as const, text: 'Ten coins for tea, twenty one for the room.', before: BASE[4]!.text }];
    expect(isSmall(BASE, markdownBlocks(text(BASE)), blocks, sectionOfBlocks(BASE))).toBe(true);
  });
});

describe('the measures', () => {
  it('changedChars counts what is left once the common start and end are off', () => {
    expect(changedChars('abcdef', 'abXdef')).toBe(1);
    expect(changedChars('abc', 'abcdef')).toBe(3);
    expect(changedChars('', 'new')).toBe(3);
    expect(changedChars('same', 'same')).toBe(0);
  });
  it('linksIn finds Markdown links, autolinks and bare addresses', () => {
    expect([...linksIn('See [a](https://a.example/x), <https://b.example> and https://c.example/y.')]).toEqual(['https://a.example/x', 'https://b.example', 'https://c.example/y']);
  });
  it('markdownBlocks splits Markdown into the blocks the pad would hold', () => {
    expect(markdownBlocks('# T\n\nOne.\n\n- a\n- b')).toEqual(['# T', 'One.', '- a\n- b']);
    expect(markdownBlocks('   ')).toEqual([]);
  });
});
