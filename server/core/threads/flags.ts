import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { HubRow, ThreadRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { forbidden, invalid } from '../../../schema/errors.ts';
import { inline } from '../kernel/framing.ts';
import { readablePad } from '../pads/pads.ts';
import { sections, sectionsChangedBy } from '../pads/sections.ts';
import type { PadEdit } from '../pads/padEdits.ts';
import type { EditablePad } from '../kernel/editors.ts';
import { allows } from '../kernel/rights.ts';
import { isVerified } from '../identity/standing.ts';
import { threadsMoved } from '../kernel/afterCommit.ts';

/**
 * Threads about a pad section, and flags on one (SPEC part 3 "Flag (dispute) on a pad section"): a
 * flag is open until the hub's owner or a helper settles it (`moderate` action "settle", or marking an
 * answer, or an edit of theirs that changes the section: an accepted fix); the flag's own starter
 * marking an answer leaves it open. Every move raises the thread's version. The 14-day lapse to
 * `unresolved` belongs to the scheduled cleanup, not here.
 */
export type FlagState = NonNullable<ThreadRow['flag']>;

/** What a new thread is about: a section of a pad of its hub, with the section's title as it reads now. */
export type About = { padId: string; block: string; title: string; flag: boolean };

export type AboutInput = { pad_id?: string | undefined; anchor_block?: string | undefined; flag?: boolean | undefined };

const SHOWN_SECTIONS = 25;

/**
 * Checks what `start_thread` says the thread is about, before its transaction (the live pad and the
 * caller's standing are read from the pool): the pad readable to the caller and in the same hub, the
 * block one of its section ids, and for a flag a verified caller. Null when the thread is about nothing.
 */
export async function aboutSection(core: Core, actor: Actor, hub: HubRow, input: AboutInput): Promise<About | null> {
  if (input.pad_id === undefined && input.anchor_block === undefined && !input.flag) return null;
  if (input.pad_id === undefined || input.anchor_block === undefined) {
    const missing = input.pad_id === undefined ? 'pad_id' : 'anchor_block';
    throw invalid(`A thread about a pad section needs both pad_id and anchor_block (a section id from open_pad); ${missing} is missing.`, {
      issues: [{ path: missing, message: 'Give pad_id and anchor_block together.' }],
    });
  }
  const { pad } = await readablePad(core, core.db.pool, input.pad_id, actor);
  if (pad.hub_id !== hub.id) {
    throw invalid(`The pad ${pad.id} is in another hub: start the thread in that pad's hub.`, { issues: [{ path: 'pad_id', message: 'Not a pad of this hub.' }] });
  }
  const all = sections(await core.sync.read(pad.id));
  const section = all.find((s) => s.id === input.anchor_block);
  if (!section) {
    const outline = all.slice(0, SHOWN_SECTIONS).map((s) => `${s.id} (${inline(s.title)})`);
    throw invalid(
      `No section ${inline(input.anchor_block)} in the pad ${pad.id}. ${all.length ? `Its sections: ${outline.join(', ')}${all.length > SHOWN_SECTIONS ? ', …' : ''}.` : 'It has no sections yet.'} open_pad "${pad.id}" shows the outline.`,
      { issues: [{ path: 'anchor_block', message: 'Not a section id of this pad.' }], sections: all.slice(0, SHOWN_SECTIONS).map((s) => s.id) },
    );
  }
  if (input.flag && !(await isVerified(core, actor.id))) {
    throw forbidden(
      `Flagging a section as wrong needs a verified account. A person confirms an email address under Settings (${core.config.baseUrl}/settings); an agent counts as verified once linked to a verified person (the link tool). Without flag, start_thread with pad_id and anchor_block still starts a thread about the section.`,
      { verified: false },
    );
  }
  return { padId: pad.id, block: section.id, title: section.title, flag: input.flag === true };
}

const FlagMoveRow = z.object({ flag: z.enum(['open', 'settled', 'unresolved']).nullable(), version: z.number() });
export type FlagMove = { thread_id: string; flag: FlagState; version: number; changed: boolean };

/**
 * Settles the thread's flag (owner and helpers: the policy checked the seat). Open and lapsed flags
 * settle; a settled one is left as it is. A thread that flags nothing is told so.
 */
export async function settleFlag(tx: CommonQueryMethods, actor: Actor, thread: ThreadRow): Promise<FlagMove> {
  if (thread.flag === null) {
    throw invalid(`The thread ${thread.id} flags no pad section, so there is nothing to settle.`, { issues: [{ path: 'thread_id', message: 'No flag on this thread.' }] });
  }
  const moved = await settleIn(tx, actor, thread.id);
  return moved ? { thread_id: thread.id, ...moved, changed: true } : { thread_id: thread.id, flag: thread.flag, version: thread.version, changed: false };
}

/** Moves an open or lapsed flag to settled and raises the thread's version; null when there was none to move. */
export async function settleIn(tx: CommonQueryMethods, actor: Actor, threadId: string): Promise<{ flag: FlagState; version: number } | null> {
  const row = await tx.maybeOne(sql.type(FlagMoveRow)`
    UPDATE threads SET flag = 'settled', flag_moved_at = now(), flag_moved_by = ${actor.id}, version = version + 1, updated_at = now()
    WHERE id = ${threadId} AND flag IN ('open', 'unresolved')
    RETURNING flag, version`);
  if (row) threadsMoved(tx, threadId);
  return row && { flag: row.flag!, version: row.version };
}

const FlaggedRow = z.object({ id: z.string(), about_block: z.string() });

/**
 * An accepted fix (SPEC part 3): an owner's or helper's edit that changes a block of a section flagged
 * as wrong settles the flag, raising the flagging thread's version. Run inside the transaction that
 * records the edit's version, so the flag moves exactly when the fix commits. Returns the threads
 * whose flag it settled.
 */
/** Whether an edit from this seat may settle flags (settleFixedFlags): only owners' and helpers' do. */
export const settlesFlags = (seat: EditablePad['seat']) => allows(seat, 'moderate');

export async function settleFixedFlags(tx: CommonQueryMethods, actor: Actor, { pad, seat }: Pick<EditablePad, 'seat'> & { pad: { id: string } }, outcome: PadEdit['outcome']): Promise<string[]> {
  if (outcome.version === null || !settlesFlags(seat)) return [];
  const flagged = await tx.any(sql.type(FlaggedRow)`SELECT id, about_block FROM threads WHERE about_pad_id = ${pad.id} AND flag = 'open' ORDER BY id`);
  if (!flagged.length) return [];
  const fixed = await sectionsChangedBy(tx, pad.id, outcome.version, outcome.changed);
  const settled: string[] = [];
  for (const thread of flagged) if (fixed.has(thread.about_block) && (await settleIn(tx, actor, thread.id))) settled.push(thread.id);
  return settled;
}
