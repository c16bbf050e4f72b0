import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRule, startRulebookTimer } from '../../server/core/rulebook/rulebook.ts';
import { disputeLapse } from '../../server/core/rulebook/disputeLapse.ts';
import { idleTask } from '../../server/core/rulebook/idleTask.ts';
import { durableStore, poke, registerAgent, request, rest, startTestServer, stores, type Reachable, type TestServer } from '../support/server.ts';

/**
 * The rulebook's timers (issue 14 item 7, SPEC part 8 "Rulebook timers"): each rule with an injected
 * clock (a minute before its boundary nothing moves, a minute after it does, and running again at
 * the same time changes nothing), /internal/prune answering what it did, and runs that race (two
 * prunes at once, two timers, two instances on one Postgres) applying a rule once.
 */

const CRON_SECRET = 'cron-secret-for-the-rulebook-0123456789';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

type Agent = Awaited<ReturnType<typeof registerAgent>>;
/** Who the rules' objects belong to: a hub of the owner's where the worker and the (verified) flagger sit. */
type Cast = { owner: Agent; worker: Agent; flagger: Agent; hub: string };

async function ok(server: Reachable, agent: Agent, tool: string, args: Record<string, unknown>) {
  const reply = await rest(server, agent.key, tool, args);
  expect(reply.status, `${tool}: ${reply.text}`).toBe(200);
  return reply.body.data;
}

async function castOf(server: TestServer): Promise<Cast> {
  const [owner, worker, flagger] = await Promise.all([registerAgent(server, 'Owner'), registerAgent(server, 'Worker'), registerAgent(server, 'Flagger')]);
  // The flagger's person confirmed an email: flagging a section needs a verified account.
  await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = (SELECT linked_human FROM participants WHERE id = ${flagger.id})`);
  const hub = await ok(server, owner, 'create_hub', { name: `Rules ${randomUUID().slice(0, 6)}` });
  for (const agent of [worker, flagger]) await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${agent.id}, 'member')`);
  return { owner, worker, flagger, hub: hub.slug };
}

/** A task the worker took, in a thread of its own. */
async function heldTask(server: TestServer, cast: Cast) {
  const thread = await ok(server, cast.owner, 'start_thread', { hub: cast.hub, title: 'Work', body: 'To do.' });
  const task = await ok(server, cast.owner, 'create_task', { thread_id: thread.thread_id, title: 'Slow work', assignee: cast.worker.id });
  await ok(server, cast.worker, 'take_task', { task_id: task.task_id });
  return { threadId: thread.thread_id as string, taskId: task.task_id as string };
}

/** A pad of two sections, the second flagged as wrong by the flagger's thread. */
async function flaggedSection(server: TestServer, cast: Cast) {
  const pad = await ok(server, cast.owner, 'create_pad', { hub: cast.hub, title: 'Plan', text: '# Goals\n\nShip it.\n\n# Risks\n\nNone at all.' });
  const risks = (await ok(server, cast.owner, 'open_pad', { pad_id: pad.pad_id })).sections[1].id as string;
  const thread = await ok(server, cast.flagger, 'start_thread', { hub: cast.hub, title: 'Risks are wrong', body: 'There are risks.', pad_id: pad.pad_id, anchor_block: risks, flag: true });
  expect(thread.flag).toBe('open');
  return { padId: pad.pad_id as string, block: risks, threadId: thread.thread_id as string };
}

const ThreadState = z.object({ flag: z.string().nullable(), version: z.number(), updated_at: z.string() });
const threadState = (server: TestServer, id: string) =>
  server.core.db.pool.one(sql.type(ThreadState)`SELECT flag, version, updated_at::text AS updated_at FROM threads WHERE id = ${id}`);
const taskState = (server: TestServer, id: string) => server.core.db.pool.oneFirst(sql.type(z.object({ state: z.string() }))`SELECT state FROM tasks WHERE id = ${id}`);
const prune = (server: Reachable, secret?: string) => request(`${server.url}/internal/prune`, secret ? { headers: { authorization: `Bearer ${secret}` } } : {});
const ruleOf = (answer: { rules: { rule: string; status: string; moved: number }[] }, name: string) => answer.rules.find((r) => r.rule === name)!;

/** A task idle for 49 hours and a flag quiet for 15 days, as the real clock reads now. */
async function dueNow(server: TestServer, cast: Cast) {
  const task = await heldTask(server, cast);
  const flag = await flaggedSection(server, cast);
  await poke(server, sql.unsafe`UPDATE tasks SET progress_at = now() - interval '49 hours' WHERE id = ${task.taskId}`);
  await poke(server, sql.unsafe`UPDATE threads SET updated_at = now() - interval '15 days' WHERE id = ${flag.threadId}`);
  return { task, flag, versions: [(await threadState(server, task.threadId)).version, (await threadState(server, flag.threadId)).version] };
}

/** Both rules applied exactly once: the task open, the flag unresolved, each thread's version raised by one. */
async function appliedOnce(server: TestServer, due: Awaited<ReturnType<typeof dueNow>>) {
  expect(await taskState(server, due.task.taskId)).toBe('open');
  expect((await threadState(server, due.task.threadId)).version).toBe(due.versions[0]! + 1);
  expect(await threadState(server, due.flag.threadId)).toMatchObject({ flag: 'unresolved', version: due.versions[1]! + 1 });
}

describe.each(stores())('rulebook on %s', (store) => {
  let server: TestServer;
  let cast: Cast;
  beforeAll(async () => {
    server = await startTestServer(store, { CRON_SECRET, LOG_LEVEL: 'error' });
    cast = await castOf(server);
  });
  afterAll(() => server?.close());

  it('idle task: a held task opens again 48 hours after its last progress, not a minute before, and once', async () => {
    const { threadId, taskId } = await heldTask(server, cast);
    const progress = new Date(Date.now() - HOUR);
    await poke(server, sql.unsafe`UPDATE tasks SET progress_at = ${progress.toISOString()} WHERE id = ${taskId}`);
    const { version } = await threadState(server, threadId);

    const early = await runRule(server.core, idleTask, new Date(progress.getTime() + 48 * HOUR - MINUTE));
    expect(early.status).toBe('ran');
    expect(early.moved).not.toContain(taskId);
    expect(await taskState(server, taskId)).toBe('taken');

    const due = new Date(progress.getTime() + 48 * HOUR + MINUTE);
    expect((await runRule(server.core, idleTask, due)).moved).toContain(taskId);
    expect(await taskState(server, taskId)).toBe('open');
    expect((await threadState(server, threadId)).version).toBe(version + 1);

    expect(await runRule(server.core, idleTask, due)).toEqual({ rule: 'idle_task', status: 'ran', moved: [], rows: 0 });
    expect((await threadState(server, threadId)).version).toBe(version + 1);
    const listed = await ok(server, cast.owner, 'list_tasks', { in: threadId });
    expect(listed.tasks).toEqual([expect.objectContaining({ task_id: taskId, state: 'open' })]);
  });

  it('dispute lapse: an open flag whose thread was quiet 14 days reads unresolved, once; a post keeps it open', async () => {
    const { padId, block, threadId } = await flaggedSection(server, cast);
    const quiet = new Date(Date.now() - HOUR);
    await poke(server, sql.unsafe`UPDATE threads SET updated_at = ${quiet.toISOString()} WHERE id = ${threadId}`);
    const before = await threadState(server, threadId);

    const early = await runRule(server.core, disputeLapse, new Date(quiet.getTime() + 14 * DAY - MINUTE));
    expect(early.moved).not.toContain(threadId);
    expect(await threadState(server, threadId)).toEqual(before);

    const due = new Date(quiet.getTime() + 14 * DAY + MINUTE);
    expect((await runRule(server.core, disputeLapse, due)).moved).toContain(threadId);
    // The lapse is no activity on the thread: its last activity stays as it was.
    expect(await threadState(server, threadId)).toEqual({ flag: 'unresolved', version: before.version + 1, updated_at: before.updated_at });
    expect(await runRule(server.core, disputeLapse, due)).toEqual({ rule: 'dispute_lapse', status: 'ran', moved: [], rows: 0 });
    expect((await threadState(server, threadId)).version).toBe(before.version + 1);

    // Readers see it: the thread's flag, the section's and the pad's status.
    expect((await ok(server, cast.owner, 'open_thread', { thread_id: threadId })).flag).toBe('unresolved');
    const outline = await ok(server, cast.owner, 'open_pad', { pad_id: padId });
    expect(outline.status).toBe('disputed');
    expect(outline.sections.find((s: { id: string }) => s.id === block)).toMatchObject({ status: 'unresolved' });

    // A flag whose thread was quiet as long but then saw a post stays open.
    const other = await flaggedSection(server, cast);
    await poke(server, sql.unsafe`UPDATE threads SET updated_at = now() - interval '20 days' WHERE id = ${other.threadId}`);
    await ok(server, cast.owner, 'post_reply', { thread_id: other.threadId, body: 'Looking into it.' });
    expect((await runRule(server.core, disputeLapse, new Date())).moved).not.toContain(other.threadId);
    expect((await threadState(server, other.threadId)).flag).toBe('open');
  });

  it('stale sections: a section unchanged for 90 days reads stale when the pad is read, with no rule to run; an edit freshens it', async () => {
    const pad = await ok(server, cast.owner, 'create_pad', { hub: cast.hub, title: 'Old plan', text: '# Goals\n\nShip it.\n\n# Risks\n\nNone at all.' });
    const [goals, risks] = ((await ok(server, cast.owner, 'open_pad', { pad_id: pad.pad_id })).sections as { id: string }[]).map((s) => s.id);
    const outlineMd = (etag?: string) =>
      request(`${server.url}/p/${pad.pad_id}.md?outline=1`, { headers: { accept: 'text/markdown', authorization: `Bearer ${cast.owner.key}`, ...(etag ? { 'if-none-match': etag } : {}) } });
    const statuses = async () => {
      const outline = await ok(server, cast.owner, 'open_pad', { pad_id: pad.pad_id });
      return { pad: outline.status, sections: (outline.sections as { id: string; status?: string }[]).map((s) => [s.id, s.status ?? 'settled']), version: outline.version as number };
    };
    const fresh = (await outlineMd()).headers.get('etag')!;
    // Goals last changed a minute short of 90 days ago, Risks a minute past.
    const lastChanged = (block: string, ago: string) =>
      poke(server, sql.unsafe`UPDATE pad_sections SET updated_at = now() - ${ago}::interval WHERE pad_id = ${pad.pad_id} AND section_id = ${block}`);
    await lastChanged(goals!, '89 days 23 hours 59 minutes');
    await lastChanged(risks!, '90 days 1 minute');
    const aged = await statuses();
    expect(aged).toMatchObject({ pad: 'settled', sections: [[goals, 'settled'], [risks, 'stale']] });
    const md = await outlineMd(fresh);
    expect(md.status).toBe(200);
    expect(md.text).toMatch(new RegExp(`\\| Risks \\| ${risks} \\| stale \\| 0 \\|`));
    expect(md.text).toMatch(new RegExp(`\\| Goals \\| ${goals} \\| settled \\| 0 \\|`));

    // A thread about the stale section reads open over stale; an edit to it makes it fresh at once.
    const thread = await ok(server, cast.owner, 'start_thread', { hub: cast.hub, title: 'Still true?', body: 'Check the risks.', pad_id: pad.pad_id, anchor_block: risks });
    expect((await statuses()).sections).toEqual([[goals, 'settled'], [risks, 'open']]);
    await ok(server, cast.owner, 'mark_answer', { post_id: thread.post_id });
    expect((await statuses()).sections).toEqual([[goals, 'settled'], [risks, 'stale']]);
    await ok(server, cast.owner, 'edit_pad', { pad_id: pad.pad_id, base_version: aged.version, edits: [{ block_id: risks, text: '# Risks ahead' }] });
    expect((await statuses()).sections).toEqual([[goals, 'settled'], [risks, 'settled']]);
  });

  it('/internal/prune runs every rule, says what each moved, and is 401 without the secret', async () => {
    for (const secret of [undefined, 'wrong-secret-of-the-same-length-012345']) {
      const refused = await prune(server, secret);
      expect([refused.status, refused.body.error]).toEqual([401, 'unauthenticated']);
    }
    const due = await dueNow(server, cast);
    const first = await prune(server, CRON_SECRET);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body.rules).toEqual([
      { rule: 'idle_task', status: 'ran', moved: 1 },
      { rule: 'dispute_lapse', status: 'ran', moved: 1 },
      // The pace windows' old rows (test/integration/pace.test.ts moves their clock); none are due here.
      { rule: 'pace_prune', status: 'ran', moved: 0 },
      // Edit wars (test/integration/checkedRules.test.ts): none here.
      { rule: 'edit_war', status: 'ran', moved: 0 },
      // Small suggestions in Checked hubs (test/integration/sectionMarks.test.ts): none here.
      { rule: 'unchecked_merge', status: 'ran', moved: 0 },
      // No hub here is quiet, nor asked to be taken over (moderation.test.ts moves their clock).
      { rule: 'owner_silence', status: 'ran', moved: 0 },
      { rule: 'takeover_notice', status: 'ran', moved: 0 },
    ]);
    await appliedOnce(server, due);
    const again = await prune(server, CRON_SECRET);
    expect(again.body.rules.map((r: { moved: number }) => r.moved)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    await appliedOnce(server, due);
    // Every run is recorded: what the rules moved over the last day counts this file's runs too.
    expect(again.body.moved_last_24h.idle_task).toBeGreaterThanOrEqual(1);
    expect(again.body.moved_last_24h.dispute_lapse).toBeGreaterThanOrEqual(1);
  });

  it('two prunes at once apply each rule once', async () => {
    const due = await dueNow(server, cast);
    const answers = (await Promise.all([prune(server, CRON_SECRET), prune(server, CRON_SECRET)])).map((reply) => reply.body);
    for (const rule of ['idle_task', 'dispute_lapse']) {
      const runs = answers.map((answer) => ruleOf(answer, rule));
      expect(runs.every((run) => run.status === 'ran' || run.status === 'busy'), JSON.stringify(runs)).toBe(true);
      expect(runs.reduce((sum, run) => sum + run.moved, 0)).toBe(1);
    }
    await appliedOnce(server, due);
  });

  it('two timers running at once apply each rule once', async () => {
    const due = await dueNow(server, cast);
    const timers = [startRulebookTimer(server.core, { everyMs: 20 }), startRulebookTimer(server.core, { everyMs: 20 })];
    try {
      await expect.poll(async () => (await threadState(server, due.flag.threadId)).flag).toBe('unresolved');
      await expect.poll(() => taskState(server, due.task.taskId)).toBe('open');
      // Let both timers run more rounds after the rules moved what was due.
      const ran = await server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM rule_runs`);
      await expect.poll(() => server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM rule_runs`)).toBeGreaterThan(ran + 4);
    } finally {
      await Promise.all(timers.map((timer) => timer.stop()));
    }
    await appliedOnce(server, due);
  });
});

/** Two instances on one Postgres database, each with its own timer: a rule's lock holds across them. */
describe.skipIf(!process.env.TEST_DATABASE_URL)('rulebook across two instances', () => {
  const closers: (() => Promise<void>)[] = [];
  let a: TestServer;
  let b: TestServer;
  let cast: Cast;
  let databaseUrl: string;
  beforeAll(async () => {
    const database = await durableStore('postgres');
    closers.push(() => database.drop());
    databaseUrl = database.env.DATABASE_URL!;
    a = await startTestServer('postgres', { ...database.env, CRON_SECRET, LOG_LEVEL: 'error' });
    closers.push(() => a.close());
    b = await startTestServer('postgres', { ...database.env, CRON_SECRET, LOG_LEVEL: 'error' });
    closers.push(() => b.close());
    cast = await castOf(a);
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('a rule whose lock is held elsewhere is busy on both instances and moves nothing; once free it runs on one', async () => {
    const due = await dueNow(a, cast);
    const holder = new pg.Client({ connectionString: databaseUrl });
    await holder.connect();
    try {
      await holder.query(`SELECT pg_advisory_lock(21, hashtext('idle_task'))`);
      for (const server of [a, b]) {
        const answer = (await prune(server, CRON_SECRET)).body;
        expect(ruleOf(answer, 'idle_task')).toEqual({ rule: 'idle_task', status: 'busy', moved: 0 });
      }
      expect(await taskState(a, due.task.taskId)).toBe('taken');
      await holder.query(`SELECT pg_advisory_unlock(21, hashtext('idle_task'))`);
    } finally {
      await holder.end();
    }
    const runs = [ruleOf((await prune(b, CRON_SECRET)).body, 'idle_task'), ruleOf((await prune(a, CRON_SECRET)).body, 'idle_task')];
    expect(runs).toEqual([
      { rule: 'idle_task', status: 'ran', moved: 1 },
      { rule: 'idle_task', status: 'ran', moved: 0 },
    ]);
    await appliedOnce(a, due);
  });

  it('prunes and timers racing on both instances apply each rule once', async () => {
    const due = await dueNow(a, cast);
    const timers = [startRulebookTimer(a.core, { everyMs: 20 }), startRulebookTimer(b.core, { everyMs: 20 })];
    try {
      const answers = (await Promise.all([a, b, a, b].map((server) => prune(server, CRON_SECRET)))).map((reply) => reply.body);
      await expect.poll(() => taskState(a, due.task.taskId)).toBe('open');
      await expect.poll(async () => (await threadState(a, due.flag.threadId)).flag).toBe('unresolved');
      expect(answers.flatMap((answer) => answer.rules).every((run: { status: string }) => run.status !== 'failed')).toBe(true);
    } finally {
      await Promise.all(timers.map((timer) => timer.stop()));
    }
    await appliedOnce(a, due);
    await appliedOnce(b, due);
  });
});
