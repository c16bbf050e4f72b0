import { Extension, getSchema, type AnyExtension } from '@tiptap/core';
import StarterKit from '@tiptap/starter-kit';
import { Plugin, PluginKey, type Transaction } from '@tiptap/pm/state';
import { ySyncPluginKey } from '@tiptap/y-tiptap';
import type { Node as PMNode } from '@tiptap/pm/model';

/**
 * The pad document: the ProseMirror schema every editor of a pad shares, server and web app alike.
 * The body is the Y.XmlFragment named `default`. Top-level blocks carry a short stable hex `id`.
 */
export const PAD_FRAGMENT = 'default';

/** Node types that carry a block id. */
export const BLOCK_TYPES = ['paragraph', 'heading', 'bulletList', 'orderedList', 'blockquote', 'codeBlock', 'horizontalRule'];

export const BLOCK_ID_PATTERN = /^[0-9a-f]{8}$/;

/** A pad holds at most this many characters, counted on its Markdown (SPEC part 8 "Sizes"). */
export const PAD_MAX_CHARS = 60_000;
/** Why the server closed a pad's live connection whose change would have made the pad longer. */
export const PAD_FULL_REASON = `This pad is full (${PAD_MAX_CHARS.toLocaleString('en')} characters at most); the change was not saved.`;

/**
 * Why the server closed a live connection that could write: its person may no longer edit the pad
 * directly (the hub became Checked, or they were made a member). The page connects again, read-only,
 * and its typing becomes a suggestion.
 */
export const PAD_SUGGEST_REASON = 'You now suggest edits to this pad: someone else checks them before they go in.';

/** Why the server closed a live connection that could write to a pad that was just locked: it opens again read-only. */
export const PAD_LOCKED_REASON = 'This pad was locked: it takes no edits until it is unlocked.';

/** The other way: a read-only connection of someone who suggested and may now edit directly. The page connects again, and may write. */
export const PAD_EDIT_REASON = 'You may now edit this pad directly.';

/**
 * The stateless message a pad's live connections get when the pad reaches a new version (typing,
 * an agent's edit, an undo, a restore): the page reads who wrote what again, so author colours and
 * history follow at once, without a reload.
 */
export const padVersionMessage = (version: number) => JSON.stringify({ type: 'version', version });

/** The version a stateless message announces; null for any other message. */
export function padVersionOf(payload: string): number | null {
  try {
    const message = JSON.parse(payload) as { type?: unknown; version?: unknown };
    return message.type === 'version' && typeof message.version === 'number' ? message.version : null;
  } catch {
    return null;
  }
}

/**
 * Why the server stopped a participant's live typing (SPEC part 8 "Pad text saved"): said when it
 * closes their connections, and again for each change of theirs that adds anything until `until`.
 * The page reads the time back with `padTextStopUntil`.
 */
export const padTextStopReason = (until: Date) =>
  `You have typed more pad text today than one participant may save in a day (3,000,000 characters): what you type now is not saved. You can type again at ${until.toISOString()}.`;

/** The time a pad text stop ends, read from its reason; null for any other reason. */
export function padTextStopUntil(reason: string): Date | null {
  const at = /^You have typed more pad text today .* You can type again at (\S+)\.$/.exec(reason)?.[1];
  const until = at ? new Date(at) : null;
  return until && !Number.isNaN(until.getTime()) ? until : null;
}

/** 8 hex characters from the platform's crypto: short to read, unique enough within one pad. */
export function newBlockId(): string {
  const bytes = new Uint8Array(4);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const blockIdsKey = new PluginKey('blockIds');

/**
 * Gives every top-level block a unique id: a new block (or one split from another, which must not
 * share its id) gets a fresh one. The server does the same for documents written without an editor.
 */
export const BlockIds = Extension.create({
  name: 'blockIds',
  addGlobalAttributes() {
    return [
      {
        types: BLOCK_TYPES,
        attributes: {
          id: {
            default: null,
            keepOnSplit: false,
            parseHTML: (element: HTMLElement) => element.getAttribute('data-block-id'),
            renderHTML: (attributes: Record<string, unknown>) => (attributes.id ? { 'data-block-id': attributes.id } : {}),
          },
        },
      },
    ];
  },
  addProseMirrorPlugins() {
    return [
      new Plugin({
        key: blockIdsKey,
        appendTransaction: (transactions, _old, state) => {
          // Changes that arrived from the shared document are not ours to number: the server gives
          // ids to blocks that lack them, so clients never race each other (or write an editor's
          // placeholder paragraph into the pad).
          const local = (tr: Transaction) => tr.docChanged && !tr.getMeta(ySyncPluginKey)?.isChangeOrigin;
          if (!transactions.some(local)) return null;
          const seen = new Set<string>();
          const tr = state.tr;
          state.doc.forEach((node: PMNode, offset: number) => {
            if (!BLOCK_TYPES.includes(node.type.name)) return;
            const id = node.attrs.id as string | null;
            if (id && BLOCK_ID_PATTERN.test(id) && !seen.has(id)) {
              seen.add(id);
              return;
            }
            const fresh = newBlockId();
            seen.add(fresh);
            tr.setNodeAttribute(offset, 'id', fresh);
          });
          return tr.docChanged ? tr.setMeta('addToHistory', false) : null;
        },
      }),
    ];
  },
});

/**
 * The extensions that define the schema: paragraph, headings 1-6, bullet and ordered lists, list
 * item, blockquote, code block, horizontal rule, hard break; bold, italic, strike, code, link.
 * Editors add their own behaviour (collaboration, carets) on top; the node set stays this one.
 */
export function padExtensions(): AnyExtension[] {
  return [
    StarterKit.configure({
      undoRedo: false,
      underline: false,
      dropcursor: false,
      gapcursor: false,
      trailingNode: false,
      listKeymap: false,
      link: { openOnClick: false, autolink: true, HTMLAttributes: { rel: 'noopener noreferrer nofollow', target: null } },
    }),
    BlockIds,
  ];
}

export const padSchema = getSchema(padExtensions());
