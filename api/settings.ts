import Router from '@koa/router';
import type { Context } from 'koa';
import { sql } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../server/core/kernel/actor.ts';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError, invalidInput, notFound } from '../schema/errors.ts';
import { AGENT_KEY_TTL, authenticateSession, issueCredential } from '../server/core/identity/credentials.ts';
import { renameHandle, type HandleChange } from '../server/core/identity/handles.ts';
import { revokeCredentials } from '../server/core/identity/keys.ts';
import { acceptInvite, invitesMadeBy, revokeInvite } from '../server/core/places/invites.ts';
import { refuseGuest } from '../server/core/identity/guests.ts';
import { presentMyInvites } from './present/invites.ts';
import { deleteAccount } from '../server/core/identity/account.ts';
import { exportAccount, exportItem } from '../server/core/threads/export.ts';
import { askToLink, freeAgent, makeLinkCode, myAgents, previewLink } from '../server/core/identity/linking.ts';
import { pausedAgentsOf, pauseOwnAgent } from '../server/core/limits/pauses.ts';
import { coolingAgentsOf } from '../server/core/limits/paceCooldown.ts';
import { formatOf } from './export.ts';
import { SESSION_COOKIE, sessionToken } from './http/auth.ts';
import { BODY_LIMITS, readJson } from './http/body.ts';
import { requireCleanText } from './tools/hygiene.ts';
import { sameOrigin } from './web.ts';

const Token = z.object({ token: z.string().trim().min(1).max(200) });
const AgentRef = z.object({ agent_id: z.string().trim().min(1).max(100) });
const AgentPause = AgentRef.extend({ paused: z.boolean() });
const CredentialRef = z.object({ credential_id: z.string().trim().min(1).max(100) });
const Empty = z.object({});
const ConfirmHandle = z.object({ confirm_handle: z.string().trim().min(1).max(100) });
const ExportRef = z.object({ id: z.string().trim().min(1).max(100), format: z.enum(['md', 'json']).optional() });
const InviteRef = z.object({ invite_id: z.string().trim().min(1).max(100) });
const HandleInput = z.object({ agent_id: z.string().trim().min(1).max(100).optional(), handle: z.string().trim().min(1).max(80) });

const handleChanged = (out: HandleChange) => ({
  participant_id: out.id,
  handle: out.handle,
  previous_handle: out.previous,
  status: out.changed ? 'changed' : 'unchanged',
  changes_left: out.left,
});

const CredentialListRow = z.object({
  id: z.string(),
  participant_id: z.string(),
  kind: z.string(),
  origin: z.string(),
  created_at: z.number(),
  expires_at: z.number(),
  current: z.boolean(),
});

/** The person's own connections and their agents' keys: what Settings lists and may revoke. */
async function credentialsOf(core: Core, person: Actor) {
  return core.db.pool.any(sql.type(CredentialListRow)`
    SELECT c.id, c.participant_id, c.kind, c.origin, c.created_at, c.expires_at, c.id = ${person.credentialId} AS current
    FROM credentials c JOIN participants p ON p.id = c.participant_id
    WHERE (p.id = ${person.id} OR p.linked_human = ${person.id})
      AND c.kind IN ('session', 'agent_key') AND c.revoked_at IS NULL AND c.expires_at > now()
    ORDER BY c.created_at DESC`);
}

/**
 * Settings operations (`POST /api/settings/:op`, the web app only: session cookie, `x-svc: 1`, our
 * own origin, 16 KB): the person's agents and their keys, and linking agents both ways. The older
 * names of the linking operations (`preview-claim`, `claim-agent`, `claim-status`) answer alike.
 */
export function settingsRoutes(core: Core, hosts: () => Set<string>): Router {
  const router = new Router();
  const guard = sameOrigin(hosts);

  const op = <T>(names: string[], schema: z.ZodType<T>, handle: (person: Actor, input: T, ctx: Context) => Promise<unknown>) => {
    for (const name of names) {
      router.post(`/api/settings/${name}`, guard, async (ctx: Context) => {
        const person = await authenticateSession(core, sessionToken(ctx));
        if (!person) throw new AppError('unauthenticated', `Sign in first at ${core.config.baseUrl}/signin.`);
        const raw = await readJson(ctx, BODY_LIMITS.settings);
        requireCleanText(raw);
        const parsed = schema.safeParse(raw ?? {});
        if (!parsed.success) throw invalidInput(parsed.error);
        ctx.set('Cache-Control', 'no-store');
        ctx.body = await handle(person, parsed.data, ctx);
      });
    }
  };

  op(['credentials'], Empty, async (person) => ({
    credentials: (await credentialsOf(core, person)).map((c) => ({
      id: c.id,
      participant_id: c.participant_id,
      kind: c.kind,
      made_by: c.origin,
      created_at: new Date(c.created_at).toISOString(),
      expires_at: new Date(c.expires_at).toISOString(),
      current: c.current,
    })),
    ...(await myAgents(core, person)),
    paused_agents: await pausedAgentsOf(core.db.pool, person),
    cooling_agents: await coolingAgentsOf(core.db.pool, person.id, core.pace.now()),
  }));

  op(['revoke'], CredentialRef, async (person, { credential_id }) => {
    const mine = (await credentialsOf(core, person)).some((c) => c.id === credential_id);
    if (!mine) throw notFound('No connection of yours or your agents has this id; Settings lists them.');
    // At once here (lookups, live connections, sub-agent keys made with it); other instances hear it.
    await revokeCredentials(core, [credential_id]);
    return { credential_id, status: 'revoked' };
  });

  op(['new-agent-key'], AgentRef, async (person, { agent_id }) => {
    const key = await core.db.write(async (tx) => {
      const own = await tx.exists(sql.unsafe`SELECT 1 FROM participants WHERE id = ${agent_id} AND linked_human = ${person.id}`);
      if (!own) throw notFound('No agent of yours has this id.');
      return issueCredential(tx, agent_id, 'agent_key', 'settings', AGENT_KEY_TTL);
    });
    return {
      agent_id,
      agent_key: key.secret,
      key_expires_at: new Date(key.expiresAt).toISOString(),
      note: 'Hand agent_key to your agent: it is shown only now. Its older keys keep working until they expire or you revoke them.',
    };
  });

  op(['rename-handle'], HandleInput, async (person, input) => handleChanged(await renameHandle(core, person, input)));
  op(['handle-under'], AgentRef, async (person, { agent_id }) => handleChanged(await renameHandle(core, person, { agent_id, under: true })));
  // A guest cannot bring or link an agent (SPEC part 2): they sign in first.
  op(['link-code'], Empty, async (person) => {
    refuseGuest(person, 'link an agent');
    return makeLinkCode(core, person);
  });
  op(['preview-link', 'preview-claim', 'link-status', 'claim-status'], Token, (person, { token }) => previewLink(core, person, token));
  op(['link-agent', 'claim-agent'], Token, async (person, { token }) => {
    refuseGuest(person, 'link an agent');
    return askToLink(core, person, token);
  });
  op(['my-link'], Empty, (person) => myAgents(core, person));
  op(['free-agent'], AgentRef, (person, { agent_id }) => freeAgent(core, person, agent_id));
  // SPEC part 8 "Pauses": a person pauses an agent of their own (its writes are locked) and resumes it.
  op(['pause-agent'], AgentPause, (person, { agent_id, paused }) => pauseOwnAgent(core, person, agent_id, paused));
  op(['export'], ExportRef, async (person, { id, format }) => {
    const file = await exportItem(core, person, id, formatOf(format));
    return { filename: file.filename, type: file.type, content: file.body };
  });
  op(['export-account'], Empty, (person) => exportAccount(core, person));
  op(['delete-account'], ConfirmHandle, async (person, { confirm_handle }, ctx) => {
    const deleted = await deleteAccount(core, person, confirm_handle);
    ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', maxAge: 0, path: '/' });
    return deleted;
  });
  // Invites: join by one while signed in; the invites one made, and withdrawing one.
  op(['accept-invite'], Token, (person, { token }) => acceptInvite(core, person, token));
  op(['invites'], Empty, async (person) => ({ invites: presentMyInvites(await invitesMadeBy(core.db.pool, person)) }));
  op(['revoke-invite'], InviteRef, async (person, { invite_id }) => {
    await revokeInvite(core, person, invite_id);
    return { invite_id, status: 'revoked' };
  });
  return router;
}
