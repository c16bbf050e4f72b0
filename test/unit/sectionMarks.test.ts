import { describe, expect, it } from 'vitest';
import { markList, markText, outlineTable, sectionMarks, sections, type PadStatus } from '../../server/core/pads/sections.ts';
import { reversalsIn, type Step } from '../../server/core/rulebook/editWar.ts';
import type { Block } from '../../sync/blocks.ts';

/** Which mark a section shows (SPEC part 2 "Section marks"), and what the edit-war rule counts as a reversal. */

const row = (kind: 'checked' | 'unchecked' | 'edit_war', version: number, current: number, section = 's1') => ({ section, kind, by: 'Ada', note: 'Looks right', version, current });

describe('section marks', () => {
  it('shows one mark a section, by priority: edit war, checked, changed since check, unchecked', () => {
    expect(sectionMarks([row('unchecked', 4, 4), row('checked', 3, 3), row('edit_war', 5, 5)]).get('s1')).toEqual({ kind: 'edit_war' });
    expect(sectionMarks([row('unchecked', 2, 3), row('checked', 3, 3)]).get('s1')).toEqual({ kind: 'checked', by: 'Ada', note: 'Looks right', version: 3 });
    expect(sectionMarks([row('unchecked', 2, 5), row('checked', 3, 5)]).get('s1')).toEqual({ kind: 'changed_since_check', by: 'Ada', version: 3 });
    expect(sectionMarks([row('unchecked', 4, 6)]).get('s1')).toEqual({ kind: 'unchecked', version: 4 });
    expect(sectionMarks([]).size).toBe(0);
  });

  it('words each mark as the spec does', () => {
    expect(markText({ kind: 'edit_war' })).toBe('proposals only (edit war)');
    expect(markText({ kind: 'checked', by: 'Ada', note: 'Sources match', version: 3 })).toBe('checked by Ada: "Sources match"');
    expect(markText({ kind: 'changed_since_check', by: 'Ada', version: 3 })).toBe('changed since check (checked by Ada at v3)');
    expect(markText({ kind: 'unchecked', version: 4 })).toBe('unchecked (went in after 24 hours without a check)');
  });

  it('adds the Note or Check column only when a section shown carries a mark, and lists marks after a whole pad', () => {
    const blocks: Block[] = [
      { id: 'h1', type: 'heading', level: 1, text: '# Goals' },
      { id: 'p1', type: 'paragraph', text: 'Ship it.' },
      { id: 'h2', type: 'heading', level: 1, text: '# Risks' },
    ];
    const all = sections(blocks);
    const rows = all.map((s) => ({ ...s, hidden: 0 }));
    const none: PadStatus = { status: 'settled', sections: new Map(), marks: new Map() };
    expect(outlineTable(rows, String, none)[0]).toBe('| Section | Id | Status | Open threads | Words |');
    expect(markList(all, none, String)).toEqual([]);
    const marked: PadStatus = { ...none, marks: new Map([['h2', { kind: 'unchecked', version: 2 }]]) };
    const table = outlineTable(rows, String, marked, 'Check');
    expect(table[0]).toBe('| Section | Id | Status | Open threads | Words | Check |');
    expect(table[2]).toBe('| Goals | h1 | settled | 0 | 2 |  |');
    expect(table[3]).toBe('| Risks | h2 | settled | 0 | 0 | unchecked (went in after 24 hours without a check) |');
    expect(markList(all, marked, String, 'Check')).toEqual(['## Section checks', '', '- Risks (section h2): unchecked (went in after 24 hours without a check)']);
  });
});

describe('reversals', () => {
  const pad = (risks: string) => [{ id: 'h', text: '# Risks' }, { id: 'b', text: risks }];
  const steps = (writers: (string | null)[], texts: string[]): Step[] => writers.map((human, i) => ({ version: i + 2, human, blocks: pad(texts[i]!) }));

  it('counts a version that puts a section back to an earlier text, undoing someone else', () => {
    const found = reversalsIn(pad('None.'), steps(['ann', 'bob', 'ann', 'bob'], ['Many.', 'None.', 'Many.', 'None.']));
    expect(found).toEqual([
      { section: 'h', version: 3, human: 'bob' },
      { section: 'h', version: 4, human: 'ann' },
      { section: 'h', version: 5, human: 'bob' },
    ]);
  });

  it('does not count new text, a person undoing their own change, or the service', () => {
    expect(reversalsIn(pad('None.'), steps(['ann', 'bob', 'ann'], ['Many.', 'Some.', 'Few.']))).toEqual([]);
    expect(reversalsIn(pad('None.'), steps(['ann', 'ann', 'ann'], ['Many.', 'None.', 'Many.']))).toEqual([]);
    expect(reversalsIn(pad('None.'), steps(['ann', null], ['Many.', 'None.']))).toEqual([]);
  });

  it('counts putting back a section someone removed', () => {
    const removed: Step = { version: 2, human: 'ann', blocks: [] };
    const back: Step = { version: 3, human: 'bob', blocks: pad('None.') };
    expect(reversalsIn(pad('None.'), [removed, back])).toEqual([{ section: 'h', version: 3, human: 'bob' }]);
  });
});
