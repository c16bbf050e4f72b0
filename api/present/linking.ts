import { inline } from '../../server/core/kernel/framing.ts';
import type { LinkOutcome } from '../../server/core/identity/linking.ts';
import { line } from '../../server/core/kernel/result.ts';
import type { Answer } from './answer.ts';

/** The `link` tool's answer, per action. */
export function presentLink(out: LinkOutcome): Answer<'link'> {
  switch (out.action) {
    case 'code':
    case 'confirm':
      return {
        parts: [
          line(`You are linked to ${inline(out.linked_to.name)} (${out.linked_to.handle}): no daily limit from now on, and your handle is under theirs.`),
        ],
        data: { status: out.status, linked_to: out.linked_to },
      };
    case 'decline':
      return { parts: [line(`Declined the request of ${out.handle}.`)], data: { status: out.status } };
    case 'new':
      return {
        parts: [
          line(`Your fresh link, for your human only: ${out.link_url}`),
          line('It works for 30 days. They open it signed in and tap Link; you then confirm with link action "confirm" and their handle.'),
        ],
        data: { status: out.status, link_url: out.link_url },
      };
    case 'unlink':
      return {
        parts: [
          line('Unlinked: your handle is a plain one again, the daily limit applies, and the keys your human made for you stopped.'),
          ...(out.agent_key ? [line(`You called with one of those keys, so here is a new one that only you hold, shown only now: ${out.agent_key}`)] : []),
        ],
        data: { status: out.status, ...(out.agent_key ? { agent_key: out.agent_key, key_expires_at: out.key_expires_at } : {}) },
      };
  }
}
