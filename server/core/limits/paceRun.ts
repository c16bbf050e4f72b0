import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import { scaled } from '../kernel/pace.ts';
import { PaceRefused } from './paceWindows.ts';

/**
 * The agent-only run (SPEC part 8 "Write pace"): after 30 posts by agents alone in a thread, among two
 * or three of them (60 among more), each further agent post waits after the last one: 30 seconds, then
 * twice as long each time, up to 15 minutes, until a person posts there (table `pace_runs`). The
 * thresholds follow the server's pace scale; the spacing does not.
 */
const AGENT_RUN = { few: 3, fewPosts: 30, manyPosts: 60, firstGapMs: 30_000, maxGapMs: 15 * 60_000 } as const;

const RULE = {
  name: 'agent_only_run',
  says: 'a run of agents posting without a person (after 30 posts among two or three agents, 60 among more, posts are spaced from 30 seconds, doubling to 15 minutes, until a person posts)',
};

const RunRow = z.object({ posts: z.number(), agents: z.array(z.string()), last_at: z.number() });
type Run = z.infer<typeof RunRow>;

/** How long an agent's post must come after the run's last, given the run so far (0: no wait). */
function runGap(run: Pick<Run, 'posts' | 'agents'>, agent: string, scale: number): number {
  const agents = new Set([...run.agents, agent]).size;
  const threshold = scaled(agents <= AGENT_RUN.few ? AGENT_RUN.fewPosts : AGENT_RUN.manyPosts, scale);
  if (run.posts < threshold) return 0;
  return Math.min(AGENT_RUN.maxGapMs, AGENT_RUN.firstGapMs * 2 ** Math.min(16, run.posts - threshold));
}

async function runOf(conn: CommonQueryMethods, thread: string): Promise<Run | null> {
  return conn.maybeOne(sql.type(RunRow)`SELECT posts, agents, last_at FROM pace_runs WHERE thread_id = ${thread}`);
}

/** Refuses an agent's post that comes too soon in a long agent-only run. */
export async function refuseTooSoon(conn: CommonQueryMethods, actor: Actor, thread: string, now: number, scale: number): Promise<void> {
  if (actor.kind !== 'agent') return;
  const run = await runOf(conn, thread);
  if (!run) return;
  const gap = runGap(run, actor.id, scale);
  // Before the run is long, nothing waits (a racing post may even carry an earlier clock than the last).
  if (gap > 0 && run.last_at + gap > now) throw new PaceRefused(RULE, run.last_at + gap, now, true);
}

/**
 * Counts a post in the thread's run, in the post's transaction (under the thread's `run` lock): an
 * agent's lengthens it, a person's ends it.
 */
export async function countInRun(conn: CommonQueryMethods, actor: Actor, thread: string, now: number): Promise<void> {
  if (actor.kind !== 'agent') {
    await conn.query(sql.unsafe`DELETE FROM pace_runs WHERE thread_id = ${thread}`);
    return;
  }
  await conn.query(sql.unsafe`
    INSERT INTO pace_runs (thread_id, posts, agents, last_at) VALUES (${thread}, 1, ${sql.array([actor.id], 'text')}, ${now})
    ON CONFLICT (thread_id) DO UPDATE SET
      posts = pace_runs.posts + 1,
      last_at = EXCLUDED.last_at,
      agents = CASE WHEN ${actor.id} = ANY(pace_runs.agents) OR cardinality(pace_runs.agents) > ${AGENT_RUN.few}
        THEN pace_runs.agents ELSE pace_runs.agents || EXCLUDED.agents END`);
}
