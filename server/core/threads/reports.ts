import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import { AppError } from '../../../schema/errors.ts';
import { deliver } from '../inbox/inbox.ts';
import type { PostTarget } from '../kernel/policy.ts';
import { newId } from '../kernel/secrets.ts';
import { ownersAndHelpers } from '../places/deciders.ts';

/** SPEC part 8 "Write pace": reports, 10 an hour per thread. */
export const REPORTS_PER_HOUR = 10;

const ReportRow = z.object({ id: z.string(), reason: z.string(), created_at: z.number() });
const WindowRow = z.object({ n: z.number(), oldest: z.number().nullable() });

export type Reported = {
  report_id: string;
  post_id: string;
  thread_id: string;
  reason: string;
  created_at: number;
  /** False: the caller had reported this post before, and this is that report. */
  first: boolean;
  /** Owners and helpers it went to (the reporter left out). */
  told: number;
};

/** Reports in one thread are counted one at a time, so the hour's limit cannot be raced past. */
const LOCK_SPACE = 16;

/**
 * `report`: a post to its hub's owner and helpers, through their inbox. One report per reporter and
 * post: reporting again answers the first report, whatever the limit says. At most 10 new reports
 * an hour in one thread, from everyone together; past that `rate_limited` says when to come back.
 */
export async function reportPost(tx: CommonQueryMethods, actor: Actor, { post, thread, hub }: PostTarget, input: { reason?: string | undefined }): Promise<Reported> {
  const base = { post_id: post.id, thread_id: thread.id };
  const earlier = await tx.maybeOne(sql.type(ReportRow)`
    SELECT id, reason, created_at FROM reports WHERE post_id = ${post.id} AND reporter_id = ${actor.id}`);
  if (earlier) return { ...base, report_id: earlier.id, reason: earlier.reason, created_at: earlier.created_at, first: false, told: 0 };
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${LOCK_SPACE}, hashtext(${thread.id}))`);
  const { n, oldest } = await tx.one(sql.type(WindowRow)`
    SELECT count(*) AS n, min(created_at) AS oldest FROM reports WHERE thread_id = ${thread.id} AND created_at > now() - interval '1 hour'`);
  if (n >= REPORTS_PER_HOUR) {
    const retry = Math.max(1, Math.ceil(((oldest ?? Date.now()) + 3_600_000 - Date.now()) / 1000));
    throw new AppError('rate_limited', `This thread had ${REPORTS_PER_HOUR} reports in the last hour, the most it takes; its owner and helpers have them. Try again in ${retry} seconds.`, {
      retry_after_seconds: retry,
    });
  }
  const reason = input.reason ?? '';
  // Two reports of the same post by the same caller at once: the second finds the first's row.
  const made = await tx.maybeOne(sql.type(ReportRow)`
    INSERT INTO reports (id, post_id, thread_id, hub_id, reporter_id, reason)
    VALUES (${newId('rep_')}, ${post.id}, ${thread.id}, ${hub.id}, ${actor.id}, ${reason})
    ON CONFLICT (post_id, reporter_id) DO NOTHING
    RETURNING id, reason, created_at`);
  if (!made) return reportPost(tx, actor, { post, thread, hub, seat: null }, input);
  const moderators = await ownersAndHelpers(tx, hub.id);
  const summary = `Reported ${post.id} in ${thread.title}${reason ? `: ${reason}` : ''}`;
  await deliver(
    tx,
    moderators.map((to) => ({ to, kind: 'report' as const, from: actor.id, thread_id: thread.id, post_id: post.id, hub_id: hub.id, summary })),
  );
  return { ...base, report_id: made.id, reason: made.reason, created_at: made.created_at, first: true, told: moderators.filter((id) => id !== actor.id).length };
}
