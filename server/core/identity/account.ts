import { sql } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { forbidden, invalid } from '../../../schema/errors.ts';
import { forgetCredentials } from './credentials.ts';
import { endGrantsOf } from './oauthTokens.ts';
import { afterCommit, credentialsEnded } from '../kernel/afterCommit.ts';

const SeatRow = z.object({ participant_id: z.string() });

/**
 * Deletes a person's account (Settings `delete-account`, confirmed with their handle). What they wrote
 * stays, signed "Deleted person"; everything that identifies them or lets anyone act as them goes:
 * their name, email and handle, every credential and connected app, their seats and requests. Their agents are
 * unlinked and the keys the person made for them stop. A hub they owned passes to its longest-standing
 * helper, else its longest-standing member; a hub with nobody else in it stays closed.
 */
export async function deleteAccount(core: Core, person: Actor, confirmHandle: string) {
  if (person.kind !== 'human' || person.via !== 'session') throw forbidden('Only a person signed in to the web app deletes their account.');
  if (confirmHandle.trim().toLowerCase() !== person.handle.toLowerCase()) {
    throw invalid(`Type your handle, ${person.handle}, as confirm_handle to delete your account.`);
  }
  const revoked = await core.db.write(async (tx) => {
    await tx.query(sql.unsafe`SELECT id FROM participants WHERE id = ${person.id} FOR UPDATE`);
    const owned = await tx.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM hubs WHERE owner_id = ${person.id} FOR UPDATE`);
    for (const hubId of owned) {
      const heir = await tx.maybeOne(sql.type(SeatRow)`
        SELECT participant_id FROM hub_members WHERE hub_id = ${hubId} AND participant_id <> ${person.id}
        ORDER BY (role = 'helper') DESC, joined_at, participant_id LIMIT 1`);
      if (!heir) continue;
      await tx.query(sql.unsafe`UPDATE hubs SET owner_id = ${heir.participant_id}, updated_at = now() WHERE id = ${hubId}`);
      await tx.query(sql.unsafe`UPDATE hub_members SET role = 'owner' WHERE hub_id = ${hubId} AND participant_id = ${heir.participant_id}`);
    }
    await tx.query(sql.unsafe`DELETE FROM hub_members WHERE participant_id = ${person.id}`);
    await tx.query(sql.unsafe`DELETE FROM join_requests WHERE participant_id = ${person.id}`);
    // Seats an invite gave in one thread or pad, names held as a guest, and invite links not yet used.
    await tx.query(sql.unsafe`DELETE FROM item_members WHERE participant_id = ${person.id}`);
    await tx.query(sql.unsafe`DELETE FROM guest_names WHERE participant_id = ${person.id}`);
    await tx.query(sql.unsafe`UPDATE invites SET revoked_at = now() WHERE created_by = ${person.id} AND revoked_at IS NULL`);
    await tx.query(sql.unsafe`DELETE FROM link_requests WHERE human_id = ${person.id}`);
    await tx.query(sql.unsafe`DELETE FROM link_codes WHERE human_id = ${person.id}`);
    const agentKeys = await tx.anyFirst(sql.type(z.object({ id: z.string() }))`
      UPDATE credentials SET revoked_at = now()
      WHERE revoked_at IS NULL AND kind = 'agent_key' AND origin = 'settings'
        AND participant_id IN (SELECT id FROM participants WHERE linked_human = ${person.id})
      RETURNING id`);
    await tx.query(sql.unsafe`
      UPDATE participants SET linked_human = NULL, handle = '@' || split_part(substr(handle, 2), '.', 1) || '-' || substr(id, 5, 6)
      WHERE linked_human = ${person.id}`);
    const own = await tx.anyFirst(sql.type(z.object({ id: z.string() }))`
      UPDATE credentials SET revoked_at = now() WHERE participant_id = ${person.id} AND revoked_at IS NULL RETURNING id`);
    await endGrantsOf(tx, person.id);
    await tx.query(sql.unsafe`
      UPDATE participants SET name = 'Deleted person', email = NULL, handle = ${`@deleted-${person.id.slice(4, 16)}`}
      WHERE id = ${person.id}`);
    const ended = [...agentKeys, ...own];
    afterCommit(tx, { reads: 'hubs' }, { reads: 'hub_members' }, { reads: 'item_members' }, { reads: 'link_requests' }, { reads: 'participants' });
    credentialsEnded(tx, ended);
    return ended;
  });
  forgetCredentials(core);
  for (const id of revoked) core.sync.closeCredential(id);
  core.log.info('account deleted', { participant: person.id, credentialsRevoked: revoked.length });
  return { deleted: true };
}
