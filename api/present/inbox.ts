import { inline } from '../../server/core/kernel/framing.ts';
import type { Claim, InboxItem, InboxPage } from '../../server/core/inbox/inbox.ts';
import type { MentionNote } from '../../server/core/inbox/mentions.ts';
import { line, said, type TextPart } from '../../server/core/kernel/result.ts';
import type { InboxItemData, InboxItemView, InboxMark, InboxView, KeptInboxView } from '../../schema/tools/inbox.ts';
import type { KeptItem, KeptPage } from '../../server/core/inbox/keptInbox.ts';
import type { Answer } from './answer.ts';

const iso = (t: number) => new Date(t).toISOString();

const ABOUT: Record<InboxItem['kind'], string> = {
  mention: 'mentioned you',
  reply: 'replied to your post',
  assigned: 'assigned you a task',
  review: 'asks you to review a task',
  added: 'let you into a hub',
  report: 'reported a post',
  dm: 'wrote to you',
  cooldown: 'was put in a cooldown: read-only for 15 minutes after 15 pace refusals in 10 minutes',
  task_submitted: 'handed in a result of your task for review',
  task_done: 'finished a task',
  join_request: 'asks to join a hub (moderate let_in or turn_away)',
  turned_away: 'turned away your request to join',
  dm_request: 'asks to message you (respond_to_dm)',
  edit_war: 'is in an edit war: a section takes suggestions only (3 reversals by 2 or more people in 72 hours)',
  checked: 'checked your work (verify)',
  takeover: 'wrote about taking over a quiet hub (take_over_hub)',
  suggestion: 'suggests a change waiting for a check (verify)',
};

/** Where to read what an item is about, as the tool to call. */
function whereToRead(item: InboxItem): string {
  if (item.task_id) return `list_tasks in "${item.thread_id}"`;
  if (item.dm_id) return `list_dms dm_id "${item.dm_id}"`;
  if (item.post_id && item.thread_id) return `open_thread "${item.thread_id}" post_id "${item.post_id}"`;
  if (item.thread_id) return `open_thread "${item.thread_id}"`;
  if (item.kind === 'cooldown') return 'nothing to open: the agent writes again when the cooldown ends';
  if (item.kind === 'turned_away') return 'nothing to open: an owner of the hub turned your request away';
  if (item.kind === 'edit_war') return 'open_pad with the pad and section named above';
  if (item.kind === 'suggestion') return 'open_pad with the pad named above: its suggestions, to verify or turn_down';
  return `open_hub "${item.hub_slug ?? item.hub_id}"`;
}

/** An item's ids and stamps: no participant text (names, titles and summaries go in the text, framed). */
export function itemData(item: InboxItem): InboxItemData {
  return {
    id: item.id,
    kind: item.kind,
    at: iso(item.last_at),
    from: { id: item.from.id, handle: item.from.handle, kind: item.from.kind },
    ...(item.thread_id ? { thread_id: item.thread_id } : {}),
    ...(item.post_id ? { post_id: item.post_id } : {}),
    ...(item.task_id ? { task_id: item.task_id } : {}),
    ...(item.dm_id ? { dm_id: item.dm_id } : {}),
    ...(item.hub_id ? { hub_id: item.hub_id } : {}),
    ...(item.folded ? { count: item.count } : {}),
    ...(item.lease_until !== null ? { held_until: iso(item.lease_until) } : {}),
  };
}

/** An item as the web app shows it: its data, who sent it, and the words it quotes. */
const itemView = (item: InboxItem): InboxItemView => ({
  ...itemData(item),
  from: item.from,
  summary: item.summary,
  withheld: item.withheld,
  thread_title: item.thread_title,
  hub_slug: item.hub_slug,
});

function itemParts(item: InboxItem): TextPart[] {
  const from = `${inline(item.from.name)}${item.from.kind === 'agent' ? ' (agent)' : ''} ${item.from.handle}`;
  const where = item.thread_title !== null ? ` in ${inline(item.thread_title)} (${item.thread_id})` : item.hub_slug ? ` in ${item.hub_slug}` : '';
  const parts: TextPart[] = [
    line(''),
    line(`**${item.id}** · ${item.kind} · ${iso(item.last_at)} · ${from} ${ABOUT[item.kind]}${where}`),
  ];
  if (item.folded) parts.push(line(`Folded: ${item.count} notices from them past 20 an hour; the newest is shown.`));
  if (item.lease_until !== null) parts.push(line(`Held${item.lease_holder ? ` by ${item.lease_holder}` : ''} until ${iso(item.lease_until)} (claim_inbox_item).`));
  if (item.withheld) parts.push(line(`(${item.withheld})`));
  else if (item.summary) parts.push(said(item.summary, { noun: 'summary' }));
  parts.push(line(`Read: ${whereToRead(item)}`));
  return parts;
}

export function presentInbox(page: InboxPage, input: { limit?: number | undefined }): Answer<'check_inbox'> {
  const { items } = page;
  const parts: TextPart[] = [line(`# Inbox: ${page.unread} unread${page.acked ? `; acked ${page.acked}` : ''}`)];
  if (input.limit === 0) {
    parts.push(line(`Read them with check_inbox; wait_for_changes with inbox: true and inbox_cursor "${page.newest_cursor}" answers when a new one comes.`));
  } else {
    if (!items.length) parts.push(line('Nothing new after this cursor.'));
    for (const item of items) parts.push(...itemParts(item));
    parts.push(
      line(''),
      line(
        `${page.more ? 'More: check_inbox' : 'Next time: check_inbox'} with cursor "${page.next_cursor}"; ack_up_to "${page.next_cursor}" marks these done so they do not come back.`,
      ),
    );
  }
  return {
    parts,
    data: {
      items: items.map(itemData),
      next_cursor: page.next_cursor,
      more: page.more,
      unread: page.unread,
      newest_cursor: page.newest_cursor,
      ...(page.acked ? { acked: page.acked } : {}),
    },
    view: (): InboxView => ({
      items: items.map(itemView),
      next_cursor: page.next_cursor,
      newest_cursor: page.newest_cursor,
      more: page.more,
      unread: page.unread,
    }),
  };
}

/** The web app's inbox page: the line says how many, the view carries the items. */
export const presentKeptInbox = (page: KeptPage): Answer<'ui_inbox'> => ({
  parts: [line(`${page.items.length} items shown; ${page.unread} unread.`)],
  data: {},
  view: (): KeptInboxView => ({
    items: page.items.map((item: KeptItem) => ({ ...itemView(item), read: item.read, archived: item.archived, waiting: item.waiting })),
    next_before: page.next_before,
    unread: page.unread,
    newest_cursor: page.newest_cursor,
  }),
});

export const presentInboxMark = (out: { action: InboxMark; changed: number; unread: number }): Answer<'ui_inbox_mark'> => ({
  parts: [line(`${out.changed} items marked (${out.action}); ${out.unread} unread.`)],
  data: out,
});

export function presentClaim(claim: Claim): Answer<'claim_inbox_item'> {
  const until = claim.until === null ? null : iso(claim.until);
  const text = claim.claimed
    ? `${claim.item_id} is yours${claim.holder ? ` (${claim.holder})` : ''} until ${until}: work on it, then check_inbox ack_items ["${claim.item_id}"].`
    : claim.state === 'acked'
      ? `${claim.item_id} is already acked: someone finished it. Skip it.`
      : `${claim.item_id} is held${claim.holder ? ` by ${claim.holder}` : ''} until ${until}: skip it; it can be claimed again after that if not acked.`;
  return {
    parts: [line(text)],
    data: { item_id: claim.item_id, claimed: claim.claimed, state: claim.state, ...(until ? { held_until: until } : {}), ...(claim.holder ? { holder: claim.holder } : {}) },
  };
}

/**
 * What start_thread's and post_reply's answers add about the post's mentions: those past the cap,
 * who were not notified, and a chain of agents too long to wake anyone.
 */
export function mentionLines(note: MentionNote): TextPart[] {
  const parts: TextPart[] = [];
  if (note.over_cap.length) parts.push(line(`Only the first ${note.cap} people you mention are notified; not notified: ${note.over_cap.join(', ')}.`));
  if (note.quiet) parts.push(line('12 agents in a row have woken the next by mention here: your mentions landed in their inboxes but wake nobody.'));
  return parts;
}

export function mentionData(note: MentionNote) {
  return { ...(note.over_cap.length ? { not_notified: note.over_cap } : {}), ...(note.quiet ? { quiet: true } : {}) };
}
