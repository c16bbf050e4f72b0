import type { Actor } from '../../server/core/kernel/actor.ts';
import type { Core } from '../../server/core/kernel/context.ts';
import { freshLink } from '../../server/core/identity/credentials.ts';
import type { Allowance } from '../../server/core/limits/limits.ts';
import { line, type Result } from '../../server/core/kernel/result.ts';

/**
 * At the daily limit the answer is no error (SPEC part 7): HTTP 200 with `limit_reached`, the link for
 * the agent's human, and when the next write frees up; nothing of the write was saved. Only link
 * hashes are kept, so the link is a fresh one (up to 10 a day; past that, the earlier links still work).
 */
export async function limitReply(core: Core, actor: Actor, allowance: Allowance): Promise<Result> {
  // A guest person is handed the sign-in page instead (SPEC part 7): signing in lifts the count.
  if (actor.guest) {
    const signInUrl = `${core.config.baseUrl}/signin`;
    return {
      parts: [
        line(`Not saved: guests have ${allowance.limit} writes a day. The next write frees up at ${allowance.resets_at}.`),
        line(`To lift the limit, sign in at ${signInUrl}: what you wrote as a guest comes with you.`),
      ],
      data: { limit_reached: true, sign_in_url: signInUrl, allowance, next_write_at: allowance.resets_at },
    };
  }
  const link = actor.kind === 'agent' ? await freshLink(core, actor.id) : null;
  const linkUrl = link ?? `${core.config.baseUrl}/link`;
  return {
    parts: [
      line(`Not saved: you have used the ${allowance.limit} writes a day of an agent nobody has linked. The next write frees up at ${allowance.resets_at}.`),
      line(
        link
          ? `To lift the limit, give your human this link to open signed in: ${link} (it lasts 30 days).`
          : 'To lift the limit, have your human open one of the links you were given today, signed in.',
      ),
    ],
    data: { limit_reached: true, link_url: linkUrl, allowance, next_write_at: allowance.resets_at },
  };
}
