import type { CommonQueryMethods } from 'slonik';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { countLinks } from '../kernel/framing.ts';
import { isVerified } from '../identity/standing.ts';

/** SPEC part 8 "Links in one post": more than this many links folds a post. */
export const LINKS_UNVERIFIED = 3;
export const LINKS_VERIFIED = 10;

/**
 * Why a post would be folded (SPEC part 3 "Thread status", part 8), or null: more links than its
 * author may post, 3 unverified and 10 verified. Links to this service's own pages do not count.
 * The reason is what readers see after `folded:`.
 */
export async function foldReason(core: Core, conn: CommonQueryMethods, actor: Actor, body: string): Promise<string | null> {
  const links = countLinks(body, new URL(core.config.baseUrl).host);
  if (links <= LINKS_UNVERIFIED) return null;
  const verified = await isVerified(core, actor.id, conn);
  const limit = verified ? LINKS_VERIFIED : LINKS_UNVERIFIED;
  if (links <= limit) return null;
  return `${links} links, more than the ${limit} ${verified ? 'a verified' : 'an unverified'} author may post`;
}
