import { inline } from '../../server/core/kernel/framing.ts';
import { line } from '../../server/core/kernel/result.ts';
import type { EditedPost } from '../../server/core/policies/ownPosts.ts';
import type { Deletion } from '../../server/core/policies/deletion.ts';
import type { Answer } from './answer.ts';
import type { MentionPeople } from '../../server/core/inbox/mentionPeople.ts';

export const presentEditedPost = (out: EditedPost): Answer<'ui_edit_post'> => ({
  parts: [
    line(
      out.changed
        ? `Edited post ${out.post_id}; it shows as edited. ${out.edits_left} edit${out.edits_left === 1 ? '' : 's'} of it left.`
        : `Post ${out.post_id} already says that; nothing changed.`,
    ),
  ],
  data: { ...out, version: String(out.version) },
});

export const presentDeletedPost = (out: { post_id: string; thread_id: string; version: number; changed: boolean }): Answer<'ui_delete_post'> => ({
  parts: [line(out.changed ? `Deleted post ${out.post_id}: its text is erased and it reads (deleted) everywhere.` : `Post ${out.post_id} was already deleted.`)],
  data: { ...out, version: String(out.version) },
});

export const presentRenamed = (out: { kind: 'hub' | 'thread' | 'pad'; id: string; name: string; slug?: string; changed: boolean }): Answer<'ui_rename'> => ({
  parts: [
    line(
      out.changed
        ? `Renamed the ${out.kind} ${out.id} to ${inline(out.name)}.${out.slug ? ` Its address stays /h/${out.slug}.` : ''}`
        : `The ${out.kind} ${out.id} is already called ${inline(out.name)}.`,
    ),
  ],
  data: { kind: out.kind, id: out.id, ...(out.slug ? { slug: out.slug } : {}), changed: out.changed },
});

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** What goes with a hub or pad, in the words the confirmation shows. */
export function whatGoes(out: Deletion): string {
  return out.kind === 'hub'
    ? `${plural(out.threads, 'thread')}, ${plural(out.pads, 'pad')} and ${plural(out.tasks, 'task')}`
    : `its text and history; ${plural(out.threads, 'thread')} about it and ${plural(out.tasks, 'task')} handed in on it lose their link to it`;
}

export const presentDeletion = <N extends 'ui_delete_pad' | 'ui_delete_hub'>(out: Deletion): Answer<N> => ({
  parts: [
    line(
      out.deleted
        ? `Deleted the ${out.kind} ${inline(out.name)} and with it ${whatGoes(out)}. Its links now answer not found.`
        : `Deleting the ${out.kind} ${inline(out.name)} takes with it ${whatGoes(out)}. Nothing was deleted yet: call again with confirm: true to delete it.`,
    ),
  ],
  data: { kind: out.kind, id: out.id, deleted: out.deleted, threads: out.threads, pads: out.pads, tasks: out.tasks } as Answer<N>['data'],
  view: () => ({ kind: out.kind, name: out.name }) as ReturnType<NonNullable<Answer<N>['view']>>,
});

export const presentMentionPeople = (out: MentionPeople): Answer<'ui_mention_people'> => ({
  parts: [
    line(`${out.people.length} people to mention: ${out.people.map((p) => p.handle).join(', ') || 'none yet'}.`),
    ...(out.unknown.length ? [line(`Nobody goes by ${out.unknown.join(', ')}.`)] : []),
    ...(out.outside.length ? [line(`Not told here (no seat, never posted): ${out.outside.join(', ')}.`)] : []),
  ],
  data: {},
  view: () => ({ people: out.people.map(({ handle, name, kind }) => ({ handle, name, kind })), unknown: out.unknown, outside: out.outside }),
});
