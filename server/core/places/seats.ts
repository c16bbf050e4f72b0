import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../../../schema/errors.ts';
import { afterCommit } from '../kernel/afterCommit.ts';

/** SPEC part 8 "Identity and registration": members per thread, pad or hub. */
const MEMBERS_MAX = 5_000;

const Seating = z.object({ seated: z.boolean(), members: z.number() });

/**
 * Refuses a new member of a full hub, thread or pad (`conflict`); one already seated passes. Takes the
 * place's seating lock for the rest of the transaction first, so joins racing for the last seat cannot
 * pass the cap together.
 */
async function refuseIfNoRoom(tx: CommonQueryMethods, table: 'hub_members' | 'item_members', column: 'hub_id' | 'item_id', id: string, participantId: string, what: string) {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`seats ${id}`}, 0))`);
  const found = await tx.one(sql.type(Seating)`
    SELECT EXISTS (SELECT 1 FROM ${sql.identifier([table])} WHERE ${sql.identifier([column])} = ${id} AND participant_id = ${participantId}) AS seated,
      (SELECT count(*) FROM ${sql.identifier([table])} WHERE ${sql.identifier([column])} = ${id}) AS members`);
  if (!found.seated && found.members >= MEMBERS_MAX) {
    throw new AppError(
      'conflict',
      `${what} already has ${MEMBERS_MAX.toLocaleString('en')} members, the most a hub, thread or pad holds; nobody more can join until someone leaves. Its owner or a helper can make room (moderate remove).`,
      { members: found.members, max: MEMBERS_MAX },
    );
  }
}

/** Seats a participant as a member of a hub (nothing when already seated), unless the hub is full. */
export async function seatInHub(tx: CommonQueryMethods, hub: { id: string; slug: string }, participantId: string): Promise<void> {
  await refuseIfNoRoom(tx, 'hub_members', 'hub_id', hub.id, participantId, `The hub ${hub.slug}`);
  await tx.query(sql.unsafe`
    INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${participantId}, 'member')
    ON CONFLICT DO NOTHING`);
  afterCommit(tx, { reads: 'hub_members' });
}

/** Seats a participant in one thread or pad of a hub by an invite (nothing when already seated), unless it is full. */
export async function seatInItem(tx: CommonQueryMethods, item: { id: string; hubId: string; inviteId: string }, participantId: string): Promise<void> {
  await refuseIfNoRoom(tx, 'item_members', 'item_id', item.id, participantId, item.id.startsWith('pad_') ? 'This pad' : 'This thread');
  await tx.query(sql.unsafe`
    INSERT INTO item_members (item_id, participant_id, hub_id, invite_id)
    VALUES (${item.id}, ${participantId}, ${item.hubId}, ${item.inviteId})
    ON CONFLICT DO NOTHING`);
  afterCommit(tx, { reads: 'item_members' });
}
