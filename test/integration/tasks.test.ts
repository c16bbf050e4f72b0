import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDoors, type AgentDoor, type DoorAnswer } from '../support/agentDoors.ts';
import { sql } from 'slonik';
import { z } from 'zod';
import { runRule } from '../../server/core/rulebook/rulebook.ts';
import { idleTask } from '../../server/core/rulebook/idleTask.ts';
import { appTool, poke, signIn, stores, type TestServer } from '../support/server.ts';
import { startCrew, type CrewAgent } from '../support/crew.ts';

/**
 * Tasks (SPEC part 3 "Task timing", part 4 the task tools, part 8 `list_tasks`): the whole cycle,
 * each refusal, paging and privacy, through REST and MCP on both stores, and the 48-hour rule with
 * an injected clock.
 */

type Agent = CrewAgent;
type Door = AgentDoor;
type Answer = DoorAnswer;

const DOORS: Door[] = ['rest', 'mcp'];
const HOUR = 3_600_000;
/** The 48-hour rule run at `now`: the ids of the tasks it opened again. */
const reopenIdleTasks = async (core: TestServer['core'], now: Date) => (await runRule(core, idleTask, now)).moved;

describe.each(stores())('tasks on %s', (store) => {
  let server: TestServer;
  let owner: Agent;
  let worker: Agent;
  let checker: Agent;
  let outsider: Agent;
  let doors: ReturnType<typeof agentDoors>;
  const call = (door: Door, agent: Agent, tool: string, args: Record<string, unknown>): Promise<Answer> => doors.call(door, agent, tool, args);

  async function ok(door: Door, agent: Agent, tool: string, args: Record<string, unknown>) {
    const answer = await call(door, agent, tool, args);
    expect(answer.ok, `${tool}: ${answer.text}`).toBe(true);
    return answer.body;
  }

  const version = (threadId: string) =>
    server.core.db.pool.oneFirst(sql.type(z.object({ version: z.number() }))`SELECT version FROM threads WHERE id = ${threadId}`);

  /** A private hub of the owner's with the worker and the checker seated, and a thread in it. */
  async function room(door: Door, name = 'Task Room') {
    const hub = await ok(door, owner, 'create_hub', { name });
    for (const agent of [worker, checker]) {
      await call(door, agent, 'join_hub', { hub: hub.slug });
      await ok(door, owner, 'moderate', { hub: hub.slug, action: 'let_in', who: agent.id });
    }
    const thread = await ok(door, owner, 'start_thread', { hub: hub.slug, title: 'Work to share', body: 'Who writes the summary?' });
    return { hub: { id: hub.hub_id as string, slug: hub.slug as string }, threadId: thread.thread_id as string };
  }

  let crew: Awaited<ReturnType<typeof startCrew>> | undefined;
  beforeAll(async () => {
    crew = await startCrew(store);
    ({ server, doors, owner, worker, checker, outsider } = crew);
  });
  afterAll(() => crew?.close());

  describe.each(DOORS)('through %s', (door) => {
    it('runs a full cycle: create with an assignee and a reviewer, take, start, submit a pad, approve', async () => {
      const { threadId } = await room(door);
      const pad = await ok(door, owner, 'create_pad', { thread_id: threadId, title: 'Summary', text: '# Findings\n\nAll good.' });
      const before = await version(threadId);

      const made = await ok(door, owner, 'create_task', { thread_id: threadId, title: 'Write the summary', assignee: worker.handle, reviewer: checker.id });
      expect(made).toMatchObject({ thread_id: threadId, state: 'assigned', assignee_id: worker.id, reviewer_id: checker.id, created_by: owner.id });
      expect(made.task_id).toMatch(/^tsk_[0-9a-f]{20}$/);
      expect(await version(threadId)).toBeGreaterThan(before);
      const taskId = made.task_id as string;

      // Only the assignee takes an assigned task.
      const stolen = await call(door, owner, 'take_task', { task_id: taskId });
      expect(stolen.body.error).toBe('forbidden');
      expect(stolen.text).toContain(worker.handle);

      expect((await ok(door, worker, 'take_task', { task_id: taskId })).state).toBe('taken');
      expect((await ok(door, worker, 'take_task', { task_id: taskId })).changed).toBe(false);
      expect((await ok(door, worker, 'update_task', { task_id: taskId, action: 'start' })).state).toBe('in_progress');

      // A result must point somewhere real.
      const nowhere = await call(door, worker, 'submit_result', { task_id: taskId });
      expect(nowhere.body.error).toBe('invalid');
      const ftp = await call(door, worker, 'submit_result', { task_id: taskId, url: 'ftp://example.org/x' });
      expect(ftp.body.error).toBe('invalid');
      const badBlock = await call(door, worker, 'submit_result', { task_id: taskId, pad_id: pad.pad_id, block_id: 'nosuchblock' });
      expect(badBlock.body.error).toBe('invalid');
      expect(badBlock.text).toContain('open_pad');

      // Nobody finishes a task by update_task; the reviewer cannot approve before a result.
      const finish = await call(door, worker, 'update_task', { task_id: taskId, action: 'finish' });
      expect(finish.ok).toBe(false);
      expect((await call(door, checker, 'update_task', { task_id: taskId, action: 'approve' })).body.error).toBe('conflict');

      const handed = await ok(door, worker, 'submit_result', { task_id: taskId, pad_id: pad.pad_id, note: 'See the findings.' });
      expect(handed).toMatchObject({ state: 'in_review', result: { kind: 'pad', pad_id: pad.pad_id } });

      // Only the named reviewer reviews.
      const selfApproval = await call(door, worker, 'update_task', { task_id: taskId, action: 'approve' });
      expect(selfApproval.body.error).toBe('forbidden');
      expect(selfApproval.text).toContain(checker.handle);

      const approved = await call(door, checker, 'update_task', { task_id: taskId, action: 'approve' });
      expect(approved.ok).toBe(true);
      expect(approved.body.state).toBe('done');
      expect(approved.text).toContain('Approved');

      const listed = await ok(door, owner, 'list_tasks', { in: threadId });
      expect(listed.tasks).toEqual([expect.objectContaining({ task_id: taskId, state: 'done', result: { kind: 'pad', pad_id: pad.pad_id } })]);
    });

    it('sends a result back, takes a section or a link, and finishes on the author’s say-so without a reviewer', async () => {
      const { threadId } = await room(door);
      const pad = await ok(door, owner, 'create_pad', { thread_id: threadId, title: 'Plan', text: '# One\n\nFirst.\n\n# Two\n\nSecond.' });
      const blocks = await server.core.db.pool.oneFirst(sql.type(z.object({ blocks: z.array(z.tuple([z.string(), z.string()])) }))`
        SELECT blocks FROM pad_versions WHERE pad_id = ${pad.pad_id} ORDER BY version DESC LIMIT 1`);
      const block = blocks[2]![0];

      const reviewed = await ok(door, owner, 'create_task', { thread_id: threadId, title: 'Check part two', reviewer: checker.handle });
      expect(reviewed.state).toBe('open');
      // An open task may be handed in at once by anyone who posts here; it goes to its reviewer.
      const first = await ok(door, worker, 'submit_result', { task_id: reviewed.task_id, pad_id: pad.pad_id, block_id: block });
      expect(first).toMatchObject({ state: 'in_review', assignee_id: worker.id, result: { kind: 'section', pad_id: pad.pad_id, block_id: block } });
      const back = await call(door, checker, 'update_task', { task_id: reviewed.task_id, action: 'send_back', note: 'Cite the source.' });
      expect(back.body.state).toBe('in_progress');
      expect(back.text).toContain('Cite the source.');
      const second = await ok(door, worker, 'submit_result', { task_id: reviewed.task_id, url: 'https://example.org/source' });
      expect(second).toMatchObject({ state: 'in_review', result: { kind: 'link' } });
      expect(JSON.stringify(second)).not.toContain('example.org');
      expect((await ok(door, checker, 'update_task', { task_id: reviewed.task_id, action: 'approve' })).state).toBe('done');

      const plain = await ok(door, owner, 'create_task', { thread_id: threadId, title: 'Link the slides' });
      await ok(door, worker, 'take_task', { task_id: plain.task_id });
      const done = await call(door, worker, 'submit_result', { task_id: plain.task_id, url: 'https://example.org/slides' });
      expect(done.body.state).toBe('done');
      // An unverified author's link reads as its host, framed as participant text.
      expect(done.text).toContain('[link to example.org]');
      // A done task takes no further steps.
      expect((await call(door, worker, 'update_task', { task_id: plain.task_id, action: 'block' })).body.error).toBe('conflict');
    });

    it('declines back to open, blocks and unblocks, and lets only the creator, owner and helpers cancel', async () => {
      const { threadId } = await room(door);
      const task = await ok(door, worker, 'create_task', { thread_id: threadId, title: 'Draft the agenda', assignee: checker.id });

      expect((await call(door, worker, 'update_task', { task_id: task.task_id, action: 'decline' })).body.error).toBe('forbidden');
      const declined = await ok(door, checker, 'update_task', { task_id: task.task_id, action: 'decline', note: 'No time this week.' });
      expect(declined.state).toBe('open');
      expect(declined.assignee_id).toBeUndefined();

      await ok(door, owner, 'take_task', { task_id: task.task_id });
      expect((await ok(door, owner, 'update_task', { task_id: task.task_id, action: 'block', note: 'Waiting for dates.' })).state).toBe('blocked');
      expect((await ok(door, owner, 'update_task', { task_id: task.task_id, action: 'unblock' })).state).toBe('in_progress');

      // The checker neither created it nor moderates the hub.
      const refused = await call(door, checker, 'update_task', { task_id: task.task_id, action: 'cancel' });
      expect(refused.body.error).toBe('forbidden');
      // The creator (a plain member) cancels their own.
      expect((await ok(door, worker, 'update_task', { task_id: task.task_id, action: 'cancel' })).state).toBe('cancelled');

      // The owner cancels anyone's.
      const other = await ok(door, checker, 'create_task', { thread_id: threadId, title: 'Book a room' });
      expect((await ok(door, owner, 'update_task', { task_id: other.task_id, action: 'cancel' })).state).toBe('cancelled');
      expect((await call(door, owner, 'update_task', { task_id: other.task_id, action: 'cancel' })).body.error).toBe('conflict');

      // Naming someone without a seat is refused with the way forward.
      const unseated = await call(door, owner, 'create_task', { thread_id: threadId, title: 'Outside help', assignee: outsider.handle });
      expect(unseated.body.error).toBe('invalid');
      expect(unseated.text).toContain('invite');
      const nobody = await call(door, owner, 'create_task', { thread_id: threadId, title: 'Ghost', assignee: '@nobody-at-all-here' });
      expect(nobody.body.error).toBe('not_found');
    });

    it('filters and pages list_tasks, and never shows a private thread’s tasks to an outsider', async () => {
      const { hub, threadId } = await room(door, 'Paging Room');
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await ok(door, owner, 'create_task', { thread_id: threadId, title: `Task ${i}`, ...(i % 2 ? { assignee: worker.id } : {}) })).task_id);
      await ok(door, worker, 'take_task', { task_id: made[0] });

      const first = await ok(door, owner, 'list_tasks', { in: hub.slug, limit: 2 });
      expect(first.tasks.map((t: any) => t.task_id)).toEqual([made[4], made[3]]);
      const second = await ok(door, owner, 'list_tasks', { in: hub.slug, limit: 2, cursor: first.next_cursor });
      expect(second.tasks.map((t: any) => t.task_id)).toEqual([made[2], made[1]]);
      const third = await ok(door, owner, 'list_tasks', { in: hub.id, limit: 2, cursor: second.next_cursor });
      expect(third.tasks.map((t: any) => t.task_id)).toEqual([made[0]]);
      expect(third.next_cursor).toBeUndefined();

      const assigned = await ok(door, owner, 'list_tasks', { in: threadId, state: 'assigned' });
      expect(assigned.tasks.map((t: any) => t.task_id)).toEqual([made[3], made[1]]);
      const byWorker = await ok(door, owner, 'list_tasks', { in: hub.slug, assignee: worker.handle });
      expect(byWorker.tasks.map((t: any) => t.task_id)).toEqual([made[3], made[1], made[0]]);
      const mine = await ok(door, worker, 'list_tasks', { in: hub.slug, mine: true });
      expect(mine.tasks.map((t: any) => t.task_id)).toEqual([made[3], made[1], made[0]]);
      expect((await call(door, owner, 'list_tasks', { limit: 51 })).body.error).toBe('invalid');
      expect((await call(door, owner, 'list_tasks', { cursor: 'not-ours' })).body.error).toBe('invalid');
      expect((await call(door, owner, 'list_tasks', { state: 'finished' })).text).toContain('in_review');

      // The outsider sees none of it, by any filter, and cannot touch a task by id.
      for (const filter of [{}, { in: hub.slug }, { in: threadId }, { assignee: worker.id }]) {
        const seen = await ok(door, outsider, 'list_tasks', filter);
        expect(seen.tasks.filter((t: any) => made.includes(t.task_id))).toEqual([]);
      }
      const touched = await call(door, outsider, 'take_task', { task_id: made[2] });
      expect(touched.body.error).toBe('not_found');
      const missing = await call(door, outsider, 'take_task', { task_id: 'tsk_00000000000000000000' });
      expect(missing.body.message).toBe(touched.body.message);
    });
  });

  it('opens a task held 48 hours without progress again, once, by the rule with an injected clock', async () => {
    const { threadId } = await room('rest', 'Idle Room');
    const idle = await ok('rest', owner, 'create_task', { thread_id: threadId, title: 'Slow work', assignee: worker.id });
    const fresh = await ok('rest', owner, 'create_task', { thread_id: threadId, title: 'Fresh work' });
    await ok('rest', worker, 'take_task', { task_id: idle.task_id });
    await ok('rest', worker, 'update_task', { task_id: idle.task_id, action: 'start' });
    await ok('rest', checker, 'take_task', { task_id: fresh.task_id });

    // 47 hours on, neither is idle yet.
    const early = await reopenIdleTasks(server.core, new Date(Date.now() + 47 * HOUR));
    expect(early).not.toContain(idle.task_id);
    expect(early).not.toContain(fresh.task_id);

    // The fresh task moved 24 hours after the clock's start; the idle one did not.
    await poke(server, sql.unsafe`UPDATE tasks SET progress_at = now() + interval '24 hours' WHERE id = ${fresh.task_id}`);
    const before = await version(threadId);
    const later = new Date(Date.now() + 49 * HOUR);
    // (Tasks other tests left held open too: the store is shared.)
    const opened = await reopenIdleTasks(server.core, later);
    expect(opened).toContain(idle.task_id);
    expect(opened).not.toContain(fresh.task_id);
    expect(await version(threadId)).toBe(before + 1);
    // Idempotent: run again at the same time, nothing more changes.
    expect(await reopenIdleTasks(server.core, later)).toEqual([]);
    expect(await version(threadId)).toBe(before + 1);

    const listed = await ok('rest', owner, 'list_tasks', { in: threadId });
    const byId = new Map<string, any>(listed.tasks.map((t: any) => [t.task_id, t]));
    expect(byId.get(idle.task_id)).toMatchObject({ state: 'open' });
    expect(byId.get(idle.task_id).assignee_id).toBeUndefined();
    expect(byId.get(fresh.task_id)).toMatchObject({ state: 'taken', assignee_id: checker.id });
    // Anyone in the thread may take it now.
    expect((await ok('rest', checker, 'take_task', { task_id: idle.task_id })).state).toBe('taken');
  });

  it('a person in the web app takes and hands in what an agent created, and the agent sees it done', async () => {
    const person = await signIn(server, 'Pat Person', `pat-${Date.now()}@example.com`);
    const { hub, threadId } = await room('mcp', 'Mixed Room');
    await appTool(server, person.cookie, 'join_hub', { hub: hub.slug });
    await ok('mcp', owner, 'moderate', { hub: hub.slug, action: 'let_in', who: person.id });
    const task = await ok('mcp', owner, 'create_task', { thread_id: threadId, title: 'Person work', assignee: person.id });
    const seen = await appTool(server, person.cookie, 'list_tasks', { mine: true });
    expect(seen.status).toBe(200);
    expect(seen.body.data.tasks.map((t: any) => t.task_id)).toContain(task.task_id);
    expect((await appTool(server, person.cookie, 'take_task', { task_id: task.task_id })).status).toBe(200);
    const handed = await appTool(server, person.cookie, 'submit_result', { task_id: task.task_id, url: 'https://example.org/done' });
    expect(handed.status).toBe(200);
    const agentView = await ok('mcp', owner, 'list_tasks', { in: threadId, state: 'done' });
    expect(agentView.tasks.map((t: any) => t.task_id)).toEqual([task.task_id]);
  });
});
