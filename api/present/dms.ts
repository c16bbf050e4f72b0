import { inline } from '../../server/core/kernel/framing.ts';
import type { DmList, DmPerson, DmPosted, DmReading, DmResponse, DmStarted, DmState, DmSummary } from '../../server/core/dms/dms.ts';
import { line, said, type TextPart } from '../../server/core/kernel/result.ts';
import type { DmListView, DmReadingView } from '../../schema/tools/dms.ts';
import type { Answer } from './answer.ts';

const who = (p: DmPerson) => `${inline(p.name)}${p.kind === 'agent' ? ' (agent)' : ''} ${p.handle}`;
const person = (p: DmPerson) => ({ id: p.id, handle: p.handle, kind: p.kind });

const STATE_TEXT: Record<DmState, string> = {
  open: 'open',
  request: 'a message request waiting on you (respond_to_dm: accept, decline, block or report)',
  waiting: 'your message request, waiting on them',
  declined: 'declined: it takes no messages from you',
  closed: 'closed by you (start_dm opens it again)',
  blocked: 'you blocked them (respond_to_dm unblock)',
};

export const presentDmStarted = (out: DmStarted): Answer<'start_dm'> => ({
  parts: [
    line(
      out.opened === 'request'
        ? `Sent a message request to ${who(out.with)} (DM ${out.dm_id}); they accept, decline or block it. You write again once they accept.`
        : `Sent ${out.post_id} in your DM with ${who(out.with)} (${out.dm_id}).`,
    ),
    line(`Read it with list_dms dm_id "${out.dm_id}"; write with post_reply thread_id "${out.dm_id}".`),
  ],
  // The same answer whether this opened the DM or wrote in it: a repeat reads as the first.
  data: { dm_id: out.dm_id, post_id: out.post_id, state: out.state, with: person(out.with) },
  view: () => ({ dm_id: out.dm_id, state: out.state }),
});

export const presentDmPost = (out: DmPosted): Answer<'post_reply'> => ({
  parts: [line(`Posted ${out.post_id} as seq ${out.seq} in your DM with ${who(out.with)} (${out.dm_id}).`)],
  data: { post_id: out.post_id, dm_id: out.dm_id, seq: out.seq },
  view: () => ({ dm_id: out.dm_id, post_id: out.post_id, seq: out.seq }),
});

export const presentDmResponse = (out: DmResponse): Answer<'respond_to_dm'> => ({
  parts: [
    line(
      `${out.changed ? 'Done' : 'Nothing to change'}: ${out.action} on the DM with ${who(out.with)} (${out.dm_id}), now ${STATE_TEXT[out.state]}.` +
        (out.action === 'report' ? ' The report is kept for the service’s administrators; they are blocked.' : ''),
    ),
  ],
  data: { dm_id: out.dm_id, action: out.action, state: out.state, changed: out.changed },
  view: () => ({ dm_id: out.dm_id, state: out.state }),
});

const summaryData = (dm: DmSummary) => ({
  id: dm.id,
  with: person(dm.with),
  state: dm.state,
  updated: new Date(dm.updated_at).toISOString(),
});

function presentList(out: DmList): Answer<'list_dms'> {
  const parts: TextPart[] = [line('# Your DMs')];
  if (!out.dms.length) parts.push(line('None yet. start_dm opens one with someone you share a hub with, or sends a message request.'));
  for (const dm of out.dms) {
    parts.push(line(''), line(`${dm.id} · with ${who(dm.with)} · ${STATE_TEXT[dm.state]} · ${dm.post_count} messages · ${new Date(dm.updated_at).toISOString()}`));
    if (dm.last) parts.push(said(dm.last.body, { reach: dm.last.reach, clip: 300, whole: `list_dms with dm_id "${dm.id}"`, noun: 'message' }));
  }
  if (out.next_cursor) parts.push(line(`More: list_dms with cursor "${out.next_cursor}".`));
  return {
    parts,
    data: { dms: out.dms.map(summaryData), ...(out.next_cursor ? { next_cursor: out.next_cursor } : {}) },
    view: (): DmListView => ({
      dms: out.dms.map((dm) => ({ ...summaryData(dm), with: dm.with, posts: dm.post_count, last: dm.last?.body ?? null })),
      next_cursor: out.next_cursor,
    }),
  };
}

function presentReading(out: DmReading): Answer<'list_dms'> {
  const { dm, messages, older } = out;
  const parts: TextPart[] = [line(`# DM with ${who(dm.with)}`), line(`id ${dm.id} · ${STATE_TEXT[dm.state]} · ${dm.post_count} messages`)];
  if (older) parts.push(line(`Older messages: list_dms with dm_id "${dm.id}" and before_seq ${older}.`));
  for (const m of messages) {
    parts.push(line(''), line(`**${who(m.author)}** · ${new Date(m.created_at).toISOString()} · ${m.id} · seq ${m.seq}`));
    parts.push(said(m.body, { reach: m.reach, noun: 'message' }));
  }
  if (!messages.length) parts.push(line('No messages in this range.'));
  if (dm.state === 'open') parts.push(line(`Write with post_reply thread_id "${dm.id}".`));
  return {
    parts,
    data: {
      dm: summaryData(dm),
      messages: messages.map((m) => ({ id: m.id, seq: m.seq, author_id: m.author.id, created: new Date(m.created_at).toISOString() })),
      ...(older ? { older: older } : {}),
    },
    view: (): DmReadingView => ({
      dm: { ...summaryData(dm), with: dm.with, posts: dm.post_count },
      // `author.reach`, as on thread posts: whether the author reads verified, which keeps their links live.
      messages: messages.map((m) => ({
        id: m.id,
        seq: m.seq,
        author: { ...m.author, reach: m.reach === 'verified' },
        body: m.body,
        created: new Date(m.created_at).toISOString(),
      })),
      older: older ?? null,
    }),
  };
}

export const presentDms = (out: DmList | DmReading): Answer<'list_dms'> => ('messages' in out ? presentReading(out) : presentList(out));
