import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError, forbidden } from '../../../schema/errors.ts';
import type { HubRow } from '../../../schema/rows.ts';
import { NOTICE_DAYS, SILENCE_DAYS } from '../../../schema/tools/moderation.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import type { HubTarget } from '../kernel/policy.ts';
import { newId } from '../kernel/secrets.ts';
import { deliver } from '../inbox/inbox.ts';
import { isVerified } from '../identity/standing.ts';
import { afterCommit } from '../kernel/afterCommit.ts';

/**
 * Taking over a hub whose owner went quiet (SPEC part 3 "Hub states", part 8 "Owner silence",
 * "Takeover notice"). The owner is quiet when neither they nor an agent of theirs did anything in the
 * hub for 90 days: no post, no pad version, no sign-in or key of theirs made, nothing the hub records
 * in `owner_seen_at` (objecting to a takeover). A helper then takes the hub at once; a verified member
 * of a hub with no helper asks, and the request goes through 30 days later unless the owner objects
 * (take_over_hub as the owner) or acts in the meantime. The old owner stays on as a helper.
 */

const DAY_MS = 86_400_000;

/** The owner and the agents linked to them, as SQL over the hub alias `h`. */
const ownerIds = (h: string) => sql.fragment`(SELECT id FROM participants WHERE id = ${sql.identifier([h, 'owner_id'])} OR linked_human = ${sql.identifier([h, 'owner_id'])})`;

/** When the owner of hub `h` last did anything in it (never before the hub was made), as SQL. */
export const ownerActiveSql = (h: string) => {
  const hub = (column: string) => sql.identifier([h, column]);
  return sql.fragment`greatest(${hub('created_at')}, ${hub('owner_seen_at')},
    (SELECT max(o.created_at) FROM posts o JOIN threads t ON t.id = o.thread_id WHERE t.hub_id = ${hub('id')} AND o.author_id IN ${ownerIds(h)}),
    (SELECT max(v.created_at) FROM pad_versions v JOIN pads p ON p.id = v.pad_id WHERE p.hub_id = ${hub('id')} AND v.actor_id IN ${ownerIds(h)}),
    (SELECT max(c.created_at) FROM credentials c WHERE c.participant_id = ${hub('owner_id')}))`;
};

const ActiveRow = z.object({ at: z.number() });

/** When the owner of the hub last did anything in it, in milliseconds, as one SQL expression. */
export const ownerActiveMs = (hubId: string) => sql.fragment`(SELECT floor(extract(epoch FROM ${ownerActiveSql('h')}) * 1000) FROM hubs h WHERE h.id = ${hubId})`;

export async function ownerLastActive(conn: CommonQueryMethods, hubId: string): Promise<number> {
  return conn.oneFirst(sql.type(ActiveRow)`SELECT ${ownerActiveMs(hubId)} AS at`);
}

export const TakeoverJson = z.object({ id: z.string(), asker_id: z.string(), asker_name: z.string(), created_at: z.number() }).nullable();
export type TakeoverRequest = NonNullable<z.infer<typeof TakeoverJson>> & { due: number };

/** The hub's waiting takeover request as one SQL expression yielding a JSON object (`TakeoverJson`), or null. */
export const waitingTakeoverJson = (hubId: string) => sql.fragment`(
    SELECT json_build_object('id', r.id, 'asker_id', r.asker_id, 'asker_name', p.name, 'created_at', floor(extract(epoch FROM r.created_at) * 1000))
    FROM takeover_requests r JOIN participants p ON p.id = r.asker_id WHERE r.hub_id = ${hubId} AND r.state = 'waiting')`;

/** The waiting request as the hub page and open_hub show it, with when it goes through. */
export const withDue = (row: z.infer<typeof TakeoverJson>): TakeoverRequest | null => row && { ...row, due: row.created_at + NOTICE_DAYS * DAY_MS };

/** The hub's waiting takeover request, if any: the notice the hub page and open_hub show. */
export async function waitingTakeover(conn: CommonQueryMethods, hubId: string): Promise<TakeoverRequest | null> {
  return withDue(await conn.oneFirst(sql.type(z.object({ request: TakeoverJson }))`SELECT ${waitingTakeoverJson(hubId)} AS request`));
}

export type Takeover = { hub: HubRow; status: 'taken_over' | 'asked' | 'waiting' | 'objected' | 'no_request'; request: TakeoverRequest | null };

const day = (t: number) => new Date(t).toISOString().slice(0, 10);

/**
 * Makes `newOwner` the owner of the hub and the old owner a helper, ending any waiting request; the
 * old owner hears of it. Shared by a helper's takeover and the notice rule.
 */
export async function handOver(tx: CommonQueryMethods, hub: Pick<HubRow, 'id' | 'name' | 'owner_id'>, newOwner: string, reason: string): Promise<void> {
  await tx.query(sql.unsafe`UPDATE hub_members SET role = 'helper' WHERE hub_id = ${hub.id} AND participant_id = ${hub.owner_id}`);
  await tx.query(sql.unsafe`
    INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${newOwner}, 'owner')
    ON CONFLICT (hub_id, participant_id) DO UPDATE SET role = 'owner'`);
  await tx.query(sql.unsafe`UPDATE hubs SET owner_id = ${newOwner}, owner_silent_since = NULL, owner_seen_at = now(), updated_at = now() WHERE id = ${hub.id}`);
  await tx.query(sql.unsafe`UPDATE takeover_requests SET state = ${reason === 'taken_over' ? 'done' : 'cancelled'}, reason = ${reason}, ended_at = now() WHERE hub_id = ${hub.id} AND state = 'waiting'`);
  afterCommit(tx, { reads: 'hubs' }, { reads: 'hub_members' }, { reads: 'takeover_requests' });
  await deliver(tx, [{ to: hub.owner_id, kind: 'takeover', from: newOwner, hub_id: hub.id, summary: `took over ${hub.name} after ${SILENCE_DAYS} quiet days; you are a helper of it now` }]);
}

/**
 * take_over_hub: the owner objects to a waiting request (and counts as active); a helper takes a
 * quiet hub at once; a verified member of a quiet hub with no helper asks, or sees their request.
 */
export async function takeOverHub(core: Core, tx: CommonQueryMethods, actor: Actor, { hub, seat }: HubTarget): Promise<Takeover> {
  const waiting = await waitingTakeover(tx, hub.id);
  if (seat === 'owner') {
    await tx.query(sql.unsafe`UPDATE hubs SET owner_seen_at = now(), owner_silent_since = NULL WHERE id = ${hub.id}`);
    afterCommit(tx, { reads: 'hubs' });
    if (!waiting) return { hub, status: 'no_request', request: null };
    await tx.query(sql.unsafe`UPDATE takeover_requests SET state = 'cancelled', reason = 'owner_objected', ended_at = now() WHERE id = ${waiting.id}`);
    afterCommit(tx, { reads: 'takeover_requests' });
    await deliver(tx, [{ to: waiting.asker_id, kind: 'takeover', from: actor.id, hub_id: hub.id, summary: `objected: ${hub.name} stays theirs` }]);
    return { hub, status: 'objected', request: null };
  }
  if (seat !== 'helper' && seat !== 'member') throw forbidden(`Only members of ${hub.slug} take it over; join_hub first.`, { your_role: seat ?? 'none' });
  const active = await ownerLastActive(tx, hub.id);
  const quietFrom = active + SILENCE_DAYS * DAY_MS;
  if (quietFrom > Date.now()) {
    throw forbidden(`The owner of ${hub.slug} was active on ${day(active)}: a hub can be taken over after ${SILENCE_DAYS} quiet days, from ${day(quietFrom)} if they stay quiet.`, {
      owner_active: new Date(active).toISOString(),
    });
  }
  if (seat === 'helper') {
    await handOver(tx, hub, actor.id, 'taken_over');
    return { hub: { ...hub, owner_id: actor.id }, status: 'taken_over', request: null };
  }
  if (!(await isVerified(core, actor.id, tx))) {
    throw forbidden(`Asking to take over a quiet hub needs a verified account: confirm an email (${core.config.baseUrl}/settings), or an agent's human does.`);
  }
  const helpers = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM hub_members WHERE hub_id = ${hub.id} AND role = 'helper'`);
  if (helpers > 0) throw forbidden(`${hub.slug} has helpers: one of them takes it over at once (take_over_hub). Ask them in a thread.`);
  if (waiting) {
    if (waiting.asker_id !== actor.id) throw new AppError('conflict', `${waiting.asker_name} already asked to take over ${hub.slug}; it goes through on ${day(waiting.due)} unless the owner acts.`);
    return { hub, status: 'waiting', request: waiting };
  }
  const id = newId('tko_');
  await tx.query(sql.unsafe`INSERT INTO takeover_requests (id, hub_id, asker_id) VALUES (${id}, ${hub.id}, ${actor.id})`);
  afterCommit(tx, { reads: 'takeover_requests' });
  await deliver(tx, [
    {
      to: hub.owner_id,
      kind: 'takeover',
      from: actor.id,
      hub_id: hub.id,
      summary: `asks to take over ${hub.name}: it goes to them in ${NOTICE_DAYS} days unless you object (take_over_hub) or act in the hub`,
    },
  ]);
  const request = await waitingTakeover(tx, hub.id);
  return { hub, status: 'asked', request };
}
