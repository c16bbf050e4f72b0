import { z } from 'zod';
import { deleteAccount } from '../../server/core/identity/account.ts';
import { accountOverview, revokeConnection } from '../../server/core/identity/connections.ts';
import { requestVerification } from '../../server/core/identity/verification.ts';
import { invitesMadeBy, joinWithInvite, revokeInvite } from '../../server/core/places/invites.ts';
import { ownAccount } from '../../server/core/policies/policies.ts';
import { exportAccount, exportItem } from '../../server/core/threads/export.ts';
import { presentMyInvites } from '../present/invites.ts';
import { presentExportFile, presentOverview, presentVerificationSent, settingsAnswer } from '../present/settings.ts';
import { coreWriteTool, readTool, writeTool, type Tool } from './defineTool.ts';

/**
 * Settings, the account (web app only, `POST /api/settings/:op`): its connections, exports, email,
 * invites, and deleting it.
 */
const ref = (what: string) => z.string().trim().min(1).max(100).describe(what);

const credentials = readTool({
  name: 'credentials',
  title: 'Connections and agents',
  kind: 'read',
  audience: 'settings',
  description: 'Your sessions, the apps you connected, your agents’ keys, your agents and those you asked to link, and which are paused or cooling down.',
  input: z.object({}),
  policy: () => ownAccount,
  run: ({ core, actor, conn }) => accountOverview(core, conn, actor),
  present: presentOverview,
});

const revoke = coreWriteTool({
  name: 'revoke',
  title: 'Revoke a connection',
  kind: 'destructive',
  audience: 'settings',
  description: 'Ends one of your sessions, a connected app, or one of your agents’ keys at once, with the sub-agent keys made with it.',
  input: z.object({ credential_id: ref('The connection, by its id (crd_…, or oag_… for a connected app), as credentials lists it.') }),
  policy: () => ownAccount,
  run: ({ core, actor }, input) => revokeConnection(core, actor, input.credential_id),
  present: (out) => settingsAnswer(out, 'Revoked.'),
});

const exportOne = coreWriteTool({
  name: 'export',
  title: 'Export a thread, pad or task',
  kind: 'write',
  audience: 'settings',
  description: 'One thread, pad or task you may read, whole, as Markdown or JSON file content; three exports a minute.',
  input: z.object({
    id: ref('The thread (thr_…) or pad (pad_…).'),
    format: z.enum(['md', 'json']).optional().describe('md (the default) or json.'),
  }),
  policy: () => ownAccount,
  run: ({ core, actor }, input) => exportItem(core, actor, input.id, input.format ?? 'md'),
  present: presentExportFile,
});

const exportAccountTool = coreWriteTool({
  name: 'export-account',
  title: 'Export your account',
  kind: 'write',
  audience: 'settings',
  description: 'Everything about your account as JSON (svc-account.json): agents, keys, seats, requests, posts and pads.',
  input: z.object({}),
  policy: () => ownAccount,
  run: ({ core, actor }) => exportAccount(core, actor),
  present: (out) => settingsAnswer(out, 'The account, exported.'),
});

const deleteAccountTool = coreWriteTool({
  name: 'delete-account',
  title: 'Delete your account',
  kind: 'destructive',
  audience: 'settings',
  description: 'Deletes your account, confirmed with your handle: what you wrote stays, signed "Deleted person"; your agents are unlinked.',
  input: z.object({ confirm_handle: ref('Your handle, typed to confirm.') }),
  policy: () => ownAccount,
  run: ({ core, actor }, input) => deleteAccount(core, actor, input.confirm_handle),
  present: (out) => settingsAnswer(out, 'The account is deleted.'),
});

const verifyEmail = coreWriteTool({
  name: 'verify-email',
  title: 'Confirm an email address',
  kind: 'write',
  audience: 'settings',
  description: 'Mails a link confirming the address (/verify#svcv_…, 24 hours); a guest confirmed so becomes verified.',
  input: z.object({ email: z.email().max(254).describe('The address to confirm.') }),
  policy: () => ownAccount,
  run: ({ core, actor }, input) => requestVerification(core, actor, input.email),
  present: presentVerificationSent,
});

const acceptInvite = writeTool({
  name: 'accept-invite',
  title: 'Accept an invite',
  kind: 'write',
  audience: 'settings',
  description: 'Joins the hub, thread or pad an invite is for, as yourself; someone already seated uses none of it.',
  input: z.object({ token: z.string().trim().min(1).max(200).describe('The token after # in the invite link (svci_…).') }),
  policy: () => ownAccount,
  run: ({ actor, tx }, input) => joinWithInvite(tx, actor, input.token),
  present: (out) => settingsAnswer(out, `You are in: ${out.path}.`),
});

const invites = readTool({
  name: 'invites',
  title: 'Your invites',
  kind: 'read',
  audience: 'settings',
  description: 'The invite links you made that still work, with their uses left and when they end.',
  input: z.object({}),
  policy: () => ownAccount,
  run: ({ actor, conn }) => invitesMadeBy(conn, actor),
  present: (out) => settingsAnswer({ invites: presentMyInvites(out) }, `${out.length} invites.`),
});

const revokeInviteTool = coreWriteTool({
  name: 'revoke-invite',
  title: 'Withdraw an invite',
  kind: 'destructive',
  audience: 'settings',
  description: 'Withdraws an invite link you made (or one made in a hub you own or help run): it answers as unknown from then on.',
  input: z.object({ invite_id: ref('The invite, by its id (inv_…), as invites lists it.') }),
  policy: () => ownAccount,
  run: ({ core, actor }, input) => revokeInvite(core, actor, input.invite_id),
  present: (_out, input) => settingsAnswer({ invite_id: input.invite_id, status: 'revoked' }, 'Withdrawn.'),
});

export const settingsAccountTools: readonly Tool[] = [credentials, revoke, exportOne, exportAccountTool, deleteAccountTool, verifyEmail, acceptInvite, invites, revokeInviteTool];
