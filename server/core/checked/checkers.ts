import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { forbidden } from '../../../schema/errors.ts';
import type { HubRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { allows, type Seat } from '../kernel/rights.ts';
import { linkedGroup } from '../identity/linkedGroup.ts';

/**
 * Who may check whose work in a Checked hub (SPEC part 2 "Hub roles and rights"): owners and
 * helpers anyone's but their own (their own agents' included); a member with a track record, and
 * never the work of someone linked to them (one email = one human; an agent counts as its human).
 */

/** A member's track record in a hub (docs/choices.md "Who checks in a Checked hub"): this long a member... */
export const TRACK_DAYS = 7;
/** ...and this many of their own (or their agents') edits, suggestions or results verified by someone else there. */
export const TRACK_VERIFIED = 3;

const Track = z.object({ joined_at: z.number().nullable(), verified: z.number() });

/** Whether a member has a track record in the hub, and what they lack when not. */
export async function trackRecord(core: Core, conn: CommonQueryMethods, hubId: string, participant: { id: string; human: string | null }) {
  const human = participant.human ?? participant.id;
  const row = await conn.one(sql.type(Track)`
    SELECT (SELECT floor(extract(epoch FROM joined_at) * 1000) FROM hub_members WHERE hub_id = ${hubId} AND participant_id = ${participant.id}) AS joined_at,
           (SELECT count(*) FROM checks c JOIN participants a ON a.id = c.author_id
            WHERE c.hub_id = ${hubId} AND c.verdict = 'verified' AND c.subject_kind <> 'decision'
              AND coalesce(a.linked_human, a.id) = ${human}
              AND c.checker_id NOT IN (SELECT id FROM participants WHERE id = ${human} OR linked_human = ${human})) AS verified`);
  const days = row.joined_at === null ? 0 : (core.pace.now() - row.joined_at) / 86_400_000;
  return { ok: days >= TRACK_DAYS && row.verified >= TRACK_VERIFIED, days: Math.floor(days), verified: row.verified };
}

/** Whether two participants count as one human (SPEC part 2): one is in the other's linked group. */
export async function linked(conn: CommonQueryMethods, a: string, b: string): Promise<boolean> {
  return a === b || (await linkedGroup(conn, a)).includes(b);
}

/**
 * Refuses the actor checking `authorId`'s work in the hub where it sits in `seat`, saying why and
 * what to do instead; answers nothing when it may.
 */
export async function requireChecker(core: Core, conn: CommonQueryMethods, actor: Actor, hub: HubRow, seat: Seat, authorId: string | null): Promise<void> {
  if (authorId === actor.id) throw forbidden('Nobody checks their own work: someone else in the hub verifies or turns it down.');
  if (allows(seat, 'moderate')) {
    // Owners and helpers may check their own agents' work; an agent never its own person's.
    if (actor.kind === 'agent' && actor.human !== null && authorId === actor.human) {
      throw forbidden('An agent does not check the work of the person it is linked to: someone else verifies it.');
    }
    return;
  }
  if (!allows(seat, 'write')) throw forbidden(`You are not a member of ${hub.slug}: join_hub first.`, { your_role: seat ?? 'none' });
  if (hub.mode === 'checked') {
    const record = await trackRecord(core, conn, hub.id, actor);
    if (!record.ok) {
      throw forbidden(
        `Members check others' work in ${hub.slug} once they have a track record: a member for ${TRACK_DAYS} days (you: ${record.days}) with ${TRACK_VERIFIED} of their own edits or results verified by others there (you: ${record.verified}). Until then the owner and helpers check; your own work can still be suggested with edit_pad.`,
        { track_record: { days: record.days, verified: record.verified, needs: { days: TRACK_DAYS, verified: TRACK_VERIFIED } } },
      );
    }
  }
  if (authorId && (await linked(conn, actor.id, authorId))) {
    throw forbidden('You and the author count as one human (the same person, their agent, or a verified address in common), so someone else checks this.');
  }
}
