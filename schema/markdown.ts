import MarkdownIt from 'markdown-it';
import { MarkdownParser, MarkdownSerializer, defaultMarkdownSerializer } from 'prosemirror-markdown';
import type { Node as PMNode } from '@tiptap/pm/model';
import { padSchema } from './pad.ts';

/**
 * Markdown both ways for the pad schema. prosemirror-markdown's defaults use its own node and mark
 * names (bullet_list, code_block, strong, em); these tables map them onto the Tiptap names we use.
 */
// Images are not in the pad schema; with the image rule off, `![alt](src)` reads as "!" and a link,
// so nothing a writer sent disappears.
const tokenizer = MarkdownIt('commonmark', { html: false, linkify: false }).enable('strikethrough').disable('image');

export const markdownParser = new MarkdownParser(padSchema, tokenizer, {
  blockquote: { block: 'blockquote' },
  paragraph: { block: 'paragraph' },
  list_item: { block: 'listItem' },
  bullet_list: { block: 'bulletList' },
  ordered_list: { block: 'orderedList', getAttrs: (tok) => ({ start: Number(tok.attrGet('start')) || 1 }) },
  heading: { block: 'heading', getAttrs: (tok) => ({ level: Number(tok.tag.slice(1)) }) },
  code_block: { block: 'codeBlock', noCloseToken: true },
  fence: { block: 'codeBlock', getAttrs: (tok) => ({ language: tok.info.trim() || null }), noCloseToken: true },
  hr: { node: 'horizontalRule' },
  hardbreak: { node: 'hardBreak' },
  em: { mark: 'italic' },
  strong: { mark: 'bold' },
  s: { mark: 'strike' },
  link: { mark: 'link', getAttrs: (tok) => ({ href: tok.attrGet('href'), title: tok.attrGet('title') || null }) },
  code_inline: { mark: 'code', noCloseToken: true },
});

const nodes = defaultMarkdownSerializer.nodes;

/** How many lists of this type stand right before this one. */
function listsBefore(parent: PMNode, index: number, type: string): number {
  let count = 0;
  while (index - count - 1 >= 0 && parent.child(index - count - 1).type.name === type) count++;
  return count;
}
const marks = defaultMarkdownSerializer.marks;

export const markdownSerializer = new MarkdownSerializer(
  {
    doc: (state, node) => state.renderContent(node),
    paragraph: nodes.paragraph!,
    blockquote: nodes.blockquote!,
    heading: nodes.heading!,
    horizontalRule: nodes.horizontal_rule!,
    // Two lists in a row only stay two if their markers differ, so markers alternate along a run.
    bulletList: (state, node, parent, index) => {
      const marker = listsBefore(parent, index, 'bulletList') % 2 ? '* ' : '- ';
      state.renderList(node, '  ', () => marker);
    },
    orderedList: (state, node, parent, index) => {
      const start = Number(node.attrs.start) || 1;
      const width = String(start + node.childCount - 1).length;
      const delimiter = listsBefore(parent, index, 'orderedList') % 2 ? ')' : '.';
      state.renderList(node, ' '.repeat(width + 2), (i) => `${String(start + i).padStart(width)}${delimiter} `);
    },
    listItem: nodes.list_item!,
    codeBlock: (state, node) => {
      // A fence longer than any backtick run inside, so the code cannot close it.
      const longest = Math.max(2, ...(node.textContent.match(/`+/g) ?? []).map((run) => run.length));
      const fence = '`'.repeat(longest + 1);
      state.write(`${fence}${node.attrs.language ?? ''}\n`);
      state.text(node.textContent, false);
      state.ensureNewLine();
      state.write(fence);
      state.closeBlock(node);
    },
    hardBreak: nodes.hard_break!,
    text: nodes.text!,
  },
  {
    italic: marks.em!,
    bold: marks.strong!,
    strike: { open: '~~', close: '~~', mixable: true, expelEnclosingWhitespace: true },
    code: marks.code!,
    link: marks.link!,
  },
);

/**
 * One line of plain prose: letters, digits, spaces and punctuation that Markdown gives no meaning to,
 * not starting with a digit (an ordered list) or a space, not ending in one, no two spaces in a row.
 * It parses to one paragraph of exactly that text, and that paragraph serializes back to it, so
 * neither the parser nor the serializer is needed (a paragraph is what agents send most):
 * test/unit/markdown.test.ts holds the two ways to the same document and the same text.
 */
const PLAIN_LINE = /^(?![\d ])(?!.* {2})[\p{L}\p{N} ,.;:?!'"()]+(?<! )$/u;

export function parseMarkdown(text: string): PMNode {
  if (PLAIN_LINE.test(text)) return padSchema.topNodeType.create(null, [padSchema.nodes.paragraph!.create(null, padSchema.text(text))]);
  return markdownParser.parse(text);
}

export function serializeMarkdown(doc: PMNode): string {
  return markdownSerializer.serialize(doc, { tightLists: true });
}

/** One top-level block as Markdown, the unit agents read and edit. */
export function blockMarkdown(block: PMNode): string {
  // A paragraph of one plain line, without marks, is that line: nothing in it needs escaping.
  const only = block.type === padSchema.nodes.paragraph && block.childCount === 1 ? block.firstChild! : null;
  if (only?.isText && only.marks.length === 0 && PLAIN_LINE.test(only.text!)) return only.text!;
  return serializeMarkdown(padSchema.topNodeType.create(null, [block]));
}
