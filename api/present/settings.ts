import type { Connection } from '../../server/core/identity/connections.ts';
import type { HandleChange } from '../../server/core/identity/handles.ts';
import type { Exported } from '../../server/core/threads/export.ts';
import { line, type Result } from '../../server/core/kernel/result.ts';

/**
 * The settings operations answer the web app with their data as the body (`POST /api/settings/:op`);
 * the one line is for whoever reads a log of them.
 */
export const settingsAnswer = (data: Record<string, unknown>, said = 'Done.'): Result => ({ parts: [line(said)], data });

const iso = (t: number) => new Date(t).toISOString();

export const presentOverview = ({ connections, ...rest }: { connections: readonly Connection[] } & Record<string, unknown>): Result =>
  settingsAnswer({
    credentials: connections.map((c) => ({
      id: c.id,
      participant_id: c.participant_id,
      kind: c.kind,
      made_by: c.origin,
      created_at: iso(c.created_at),
      expires_at: iso(c.expires_at),
      current: c.current,
    })),
    ...rest,
  });

const SHOWN_ONCE = 'Hand agent_key to your agent: it is shown only now.';

export const presentNewAgent = (out: Record<string, unknown>): Result =>
  settingsAnswer({ ...out, note: `${SHOWN_ONCE} The agent is linked to you, so it has no daily limit.` }, 'Agent added, with its key.');

export const presentNewAgentKey = (out: Record<string, unknown>): Result =>
  settingsAnswer({ ...out, note: `${SHOWN_ONCE} Its older keys keep working until they expire or you revoke them.` }, 'Another key for the agent.');

export const presentHandleChange = (out: HandleChange): Result =>
  settingsAnswer(
    { participant_id: out.id, handle: out.handle, previous_handle: out.previous, status: out.changed ? 'changed' : 'unchanged', changes_left: out.left },
    out.changed ? `The handle is ${out.handle} now.` : `The handle stays ${out.handle}.`,
  );

export const presentExportFile = (file: Exported): Result => settingsAnswer({ filename: file.filename, type: file.type, content: file.body }, `Exported as ${file.filename}.`);

export const presentVerificationSent = (sent: { delivery: string; note: string }): Result =>
  settingsAnswer({ sent: true, delivery: sent.delivery, message: `A link to confirm the address is on its way; it works for 24 hours. ${sent.note}` });
