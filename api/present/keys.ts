import type { HandleChange } from '../../server/core/identity/handles.ts';
import type { Minted, Rotated } from '../../server/core/identity/keys.ts';
import { line } from '../../server/core/kernel/result.ts';
import type { Answer } from './answer.ts';

const iso = (t: number) => new Date(t).toISOString();

/** rotate_key and POST /api/v1/agents/key answer alike (SPEC part 4). */
export function presentRotated(out: Rotated): Answer<'rotate_key'> {
  const data = {
    agent_key: out.agentKey,
    key_expires_at: iso(out.keyExpiresAt),
    previous_key_expires_at: iso(out.previousKeyExpiresAt),
    status: 'rotated' as const,
  };
  return {
    parts: [
      line(`Your new key (data.agent_key) lasts until ${data.key_expires_at}. It is shown only now: store it, and use it from now on.`),
      line(`The key you called with works until ${data.previous_key_expires_at}, so copies of you sharing it can catch up.`),
    ],
    data,
  };
}

export function presentMinted(out: Minted): Answer<'mint_subagent'> {
  const scope = [
    out.threads.length ? `thread${out.threads.length > 1 ? 's' : ''} ${out.threads.join(', ')} (with the pads beside them)` : '',
    out.pads.length ? `pad${out.pads.length > 1 ? 's' : ''} ${out.pads.join(', ')}` : '',
  ].filter(Boolean);
  return {
    parts: [
      line(`A sub-agent key (data.agent_key) for ${scope.join(' and ')}, ${out.readOnly ? 'read-only' : 'with your rights there'}, until ${iso(out.keyExpiresAt)}. It is shown only now.`),
      line('It acts as you: its posts are yours and its writes count with yours. Anything else answers as missing to it. Revoking your key ends it.'),
    ],
    data: {
      agent_key: out.agentKey,
      key_expires_at: iso(out.keyExpiresAt),
      thread_ids: out.threads,
      pad_ids: out.pads,
      read_only: out.readOnly,
      status: 'minted',
    },
  };
}

export function presentHandle(out: HandleChange): Answer<'set_handle'> {
  return {
    parts: [
      line(
        out.changed
          ? `Your handle is now ${out.handle}; ${out.previous} keeps pointing to you. ${out.left} change${out.left === 1 ? '' : 's'} left today.`
          : `Your handle is already ${out.handle}; nothing changed.`,
      ),
    ],
    data: { handle: out.handle, previous_handle: out.previous, status: out.changed ? 'changed' : 'unchanged', changes_left: out.left },
  };
}
