import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { updateYFragment } from '@tiptap/y-tiptap';
import { blockMarkdown, markdownParser, parseMarkdown, serializeMarkdown } from '../../schema/markdown.ts';
import { padSchema } from '../../schema/pad.ts';
import { ensureBlockIds, insertBlocks, parseBlocks, readBlocks, readNodes, replaceBlock } from '../../sync/blocks.ts';
import { diffAgainstBase as diffChanges } from '../../sync/baseDiff.ts';
import { outlineRows, sections } from '../../server/core/pads/sections.ts';

const samples = {
  everything: `# Title

Intro with **bold**, *italic*, ~~strike~~, \`code\` and [a link](https://example.com "Example").

## Lists

- one
- two
  - nested

3. three
4. four

> quoted
> lines

\`\`\`ts
const fence = '\`\`\`';
\`\`\`

---

line one\\
line two
`,
  loose: 'Paragraph with trailing spaces   \n\n\n\n* star bullets\n+ plus\n\n1) paren list\n\nSetext\n======\n',
  escapes: 'Not *emphasis*: \\*literal\\* and a # hash, <b>html</b> & 5 < 6.\n',
  image: '![diagram](https://example.com/d.png) stays as text and link\n',
};

describe('Markdown through the pad schema', () => {
  it.each(Object.entries(samples))('%s is stable after one pass', (_name, text) => {
    const once = serializeMarkdown(parseMarkdown(text));
    expect(serializeMarkdown(parseMarkdown(once))).toBe(once);
  });

  it('maps Markdown onto the Tiptap node and mark names', () => {
    const doc = parseMarkdown(samples.everything);
    const types = new Set<string>();
    doc.descendants((node) => {
      types.add(node.type.name);
      for (const mark of node.marks) types.add(mark.type.name);
    });
    for (const name of ['heading', 'paragraph', 'bulletList', 'orderedList', 'listItem', 'blockquote', 'codeBlock', 'horizontalRule', 'hardBreak', 'bold', 'italic', 'strike', 'code', 'link']) {
      expect(types, name).toContain(name);
    }
    expect(Object.keys(padSchema.nodes)).not.toContain('bullet_list');
  });

  it('keeps an ordered list start and a code language', () => {
    const once = serializeMarkdown(parseMarkdown('7. seven\n8. eight\n\n```python\nx = 1\n```\n'));
    expect(once).toBe('7. seven\n8. eight\n\n```python\nx = 1\n```');
  });
});

describe('blocks on a Y document', () => {
  const docWith = (text: string) => {
    const doc = new Y.Doc();
    const fragment = doc.getXmlFragment('default');
    doc.transact(() => insertBlocks(fragment, 0, parseBlocks(text)));
    return { doc, fragment };
  };

  it('round-trips Markdown through Yjs block by block', () => {
    const { fragment } = docWith(samples.everything);
    const text = readBlocks(fragment).map((b) => b.text).join('\n\n');
    expect(text).toBe(serializeMarkdown(parseMarkdown(samples.everything)));
  });

  it('gives every block a unique 8-hex id, and repairs missing and duplicate ids', () => {
    const { doc, fragment } = docWith('A.\n\nB.\n\nC.');
    const ids = readBlocks(fragment).map((b) => b.id);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}$/);
    const [, second, third] = fragment.toArray() as Y.XmlElement[];
    doc.transact(() => {
      second!.setAttribute('id', ids[0]!);
      third!.removeAttribute('id');
    });
    expect(doc.transact(() => ensureBlockIds(fragment))).toBe(true);
    const repaired = readBlocks(fragment).map((b) => b.id);
    expect(repaired[0]).toBe(ids[0]);
    expect(new Set(repaired).size).toBe(3);
  });

  it('merges a block edit into the existing element, keeping concurrent typing in the same text', () => {
    const { doc, fragment } = docWith('Hello world.');
    const other = new Y.Doc();
    Y.applyUpdate(other, Y.encodeStateAsUpdate(doc));
    // Someone else types at the start while the edit changes the end.
    const otherText = (other.getXmlFragment('default').get(0) as Y.XmlElement).get(0) as Y.XmlText;
    other.transact(() => otherText.insert(0, 'Oh, '));
    const { element } = readNodes(fragment)[0]!;
    doc.transact(() => replaceBlock(fragment, element, parseBlocks('Hello world!')));
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(other));
    expect(readBlocks(fragment)[0]!.text).toBe('Oh, Hello world!');
  });

  it('edits a plain paragraph into another exactly as the library merge does, surrogate pairs and all', () => {
    const alphabet = ['a', 'b', ' ', '.', 'é', '中', '🙂', '🙃', '😀'];
    let seed = 11;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const line = () => Array.from({ length: Math.floor(random() * 8) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    const pairs: [string, string][] = [['Hello world.', 'Hello world!'], ['abc', ''], ['', 'abc'], ['🙂 x', '🙃 x'], ['x 🙂', 'x 😀']];
    for (let i = 0; i < 500; i++) pairs.push([line(), line()]);
    for (const [before, after] of pairs) {
      const ours = docWith('x');
      const library = docWith('x');
      for (const { doc, fragment } of [ours, library]) {
        const element = fragment.get(0) as Y.XmlElement;
        doc.transact(() => {
          element.setAttribute('id', 'a1b2c3d4');
          (element.get(0) as Y.XmlText).delete(0, 1);
          (element.get(0) as Y.XmlText).insert(0, before);
        });
      }
      const node = padSchema.nodes.paragraph!.create({ id: 'a1b2c3d4' }, after ? padSchema.text(after) : null);
      ours.doc.transact(() => replaceBlock(ours.fragment, ours.fragment.get(0) as Y.XmlElement, [node]));
      library.doc.transact(() => updateYFragment(library.doc, library.fragment.get(0) as Y.XmlElement, node, { mapping: new Map(), isOMark: new Map() }));
      expect(ours.fragment.toString(), JSON.stringify([before, after])).toBe(library.fragment.toString());
      // Nothing was lost to a split surrogate pair on its way through an update.
      const copy = new Y.Doc();
      Y.applyUpdate(copy, Y.encodeStateAsUpdate(ours.doc));
      expect(readBlocks(copy.getXmlFragment('default'))[0]).toEqual(readBlocks(library.fragment)[0]);
    }
  });

  it('reads again only what changed, and always what the document says now', () => {
    const { doc, fragment } = docWith('# Title\n\nFirst paragraph.\n\n- one\n- two\n\nLast.');
    // What a fresh reader of the same document sees, with nothing remembered.
    const fresh = () => {
      const copy = new Y.Doc();
      Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc));
      return readBlocks(copy.getXmlFragment('default'));
    };
    const before = readBlocks(fragment);
    expect(readBlocks(fragment)[0]).toBe(before[0]); // unchanged blocks are the very same objects
    const [, paragraph, list] = fragment.toArray() as Y.XmlElement[];
    const text = paragraph!.get(0) as Y.XmlText;
    const steps: (() => void)[] = [
      () => text.insert(0, 'Typed. '),
      () => text.format(0, 6, { bold: {} }),
      () => paragraph!.setAttribute('id', 'abcdef12'),
      // Deep inside a list item.
      () => (((list!.get(1) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(3, ' and three'),
      () => fragment.delete(0, 1),
      () => insertBlocks(fragment, 1, parseBlocks('Inserted.')),
    ];
    for (const step of steps) {
      doc.transact(step);
      expect(readBlocks(fragment)).toEqual(fresh());
    }
    expect(readBlocks(fragment).map((b) => b.text)).toEqual(['**Typed.** First paragraph.', 'Inserted.', '- one\n- two and three', 'Last.']);
  });

  it('reads a block the schema does not know without deleting it', () => {
    const { doc, fragment } = docWith('Known.');
    doc.transact(() => fragment.insert(1, [new Y.XmlElement('mysteryWidget')]));
    expect(readBlocks(fragment).map((b) => b.text)).toEqual(['Known.']);
    expect(fragment.length).toBe(2);
  });
});

describe('whole-text edits against the base version', () => {
  /** The changes with the new text each one gives its block. */
  const diffAgainstBase = (before: typeof base, next: string[]) =>
    diffChanges(before, next).map((change) =>
      change.kind === 'edit'
        ? { kind: 'edit', blockId: change.blockId, text: change.index === null ? '' : next[change.index] }
        : { kind: 'insert', after: change.after, text: next[change.index] },
    );
  const base = [
    { id: 'a', text: 'A.' },
    { id: 'b', text: 'B.' },
    { id: 'c', text: 'C.' },
  ];

  it('touches only the blocks that differ', () => {
    expect(diffAgainstBase(base, ['A.', 'B, changed.', 'C.'])).toEqual([{ kind: 'edit', blockId: 'b', text: 'B, changed.' }]);
    expect(diffAgainstBase(base, ['A.', 'B.', 'C.'])).toEqual([]);
  });

  it('turns new paragraphs into inserts after the block before them, and missing ones into deletions', () => {
    expect(diffAgainstBase(base, ['Zero.', 'A.', 'C.', 'D.'])).toEqual([
      { kind: 'insert', after: 'start', text: 'Zero.' },
      { kind: 'edit', blockId: 'b', text: '' },
      { kind: 'insert', after: 'c', text: 'D.' },
    ]);
  });
});

describe('sections', () => {
  it('are the runs between headings, with Introduction first', () => {
    const blocks = [
      { id: '1', type: 'paragraph', text: 'Intro words here.' },
      { id: '2', type: 'heading', text: '# One', level: 1 },
      { id: '3', type: 'paragraph', text: 'Body.' },
      { id: '4', type: 'heading', text: '### Deep', level: 3 },
    ];
    expect(sections(blocks).map((s) => [s.id, s.title, s.level, s.words])).toEqual([
      ['1', 'Introduction', 0, 3],
      ['2', 'One', 1, 1],
      ['4', 'Deep', 3, 0],
    ]);
    expect(outlineRows(sections(blocks)).every((row) => row.hidden === 0)).toBe(true);
  });
});

describe('plain lines without the parser', () => {
  it('give exactly the document the Markdown parser gives, and its serializer writes, for plain prose and for anything near it', () => {
    const alphabet = ['a', 'Z', 'é', 'ß', '中', '7', '0', ' ', ' ', ',', '.', ';', ':', '?', '!', "'", '"', '(', ')', '*', '_', '#', '-', '+', '&', '<', '[', '`', '\\', '~', '1.', '\t'];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const texts = [
      'edit 12', 'Plain words.', 'He said "yes" (twice)!', 'Ünïcode und ß', '2024 was long', '1. one', '- item', '+ item', '# Title',
      ' leading', 'trailing ', 'two  spaces', 'a*b*c', 'snake_case_name', 'R&D', 'x < y', '[not a link]', 'C:\\path', 'tilde ~~x~~', '---', '(1) first',
    ];
    for (let i = 0; i < 3_000; i++) texts.push(Array.from({ length: 1 + Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''));
    for (const text of texts) {
      const fast = parseMarkdown(text);
      const full = markdownParser.parse(text);
      expect(fast.eq(full), JSON.stringify(text)).toBe(true);
      // And back: each block's Markdown is what the serializer writes for it.
      full.forEach((block) => expect(blockMarkdown(block), JSON.stringify(text)).toBe(serializeMarkdown(padSchema.topNodeType.create(null, [block]))));
    }
  });
});
