import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { agentDoors, type AgentDoor } from '../support/agentDoors.ts';
import { assistantToken } from '../support/assistant.ts';
import { appTool, mcpClient, request, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';
import { applySuggestion } from '../../server/core/checked/acceptance.ts';

/**
 * Checked hubs (SPEC parts 1-4, issue 24): set_hub_mode, edit_pad kept as a suggestion (Checked hub,
 * `propose`, an edit war), the waiting limits, verify on suggestions, edits, results and decisions
 * with its rules (never one's own, track record, not linked, no unclicked assistant), and where
 * verify is listed. Through REST and MCP, rows checked after.
 */
type Agent = { key: string; id: string; handle: string };
const DOORS: AgentDoor[] = ['rest', 'mcp'];
const Row = z.record(z.string(), z.unknown());

describe.each(stores())('Checked hubs on %s', (store) => {
  let server: TestServer;
  let doors: ReturnType<typeof agentDoors>;
  let owner: Agent;
  let helper: Agent;
  let members: Agent[];
  let person: { cookie: string; id: string };
  /** Two agents of one person: they count as one human. */
  let twinA: Agent;
  let twinB: Agent;

  const call = async (agent: Agent, tool: string, args: Record<string, unknown>, door: AgentDoor = 'rest') => doors.call(door, agent, tool, args);
  const ok = async (agent: Agent, tool: string, args: Record<string, unknown>, door: AgentDoor = 'rest') => {
    const answer = await call(agent, tool, args, door);
    if (!answer.ok) throw new Error(`${tool}: ${JSON.stringify(answer.body)}`);
    return answer;
  };
  const rows = (query: ReturnType<typeof sql.unsafe>) => server.core.db.pool.any(query);
  const one = async (query: ReturnType<typeof sql.unsafe>) => (await server.core.db.pool.one(sql.type(Row)`${query}`)) as Record<string, any>;

  const agentOf = async (cookie: string, name: string): Promise<Agent> => {
    const made = await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify({ name }),
    });
    return { key: made.body.agent_key, id: made.body.agent.id, handle: made.body.agent.handle };
  };
  const newAgent = async (name: string) => agentOf((await signIn(server, `${name}'s person`, `p-${randomUUID()}@example.com`)).cookie, name);

  /** A hub the owner makes, with the helper named and everyone let in, in `mode`. */
  const newHub = async (mode: 'open' | 'checked') => {
    const slug = (await ok(owner, 'create_hub', { name: `Room ${randomUUID().slice(0, 8)}` })).body.slug as string;
    for (const agent of [helper, ...members, twinA, twinB]) {
      await ok(agent, 'join_hub', { hub: slug });
      await ok(owner, 'moderate', { hub: slug, action: 'let_in', who: agent.id });
    }
    await ok(owner, 'moderate', { hub: slug, action: 'name_helper', who: helper.id });
    if (mode === 'checked') await ok(owner, 'set_hub_mode', { hub: slug, mode });
    return slug;
  };
  const newPad = async (hub: string, text = '# Plan\n\nAlpha stays.\n\nBeta stays.\n\n# Budget\n\nTen coins.') =>
    (await ok(owner, 'create_pad', { hub, title: 'Plan', text })).body as { pad_id: string; version: number };
  const fullText = async (padId: string) => (await ok(owner, 'open_pad', { pad_id: padId, mode: 'full' })).body;
  const blocksOf = async (padId: string) =>
    (await rest(server, owner.key, 'open_pad', { pad_id: padId, mode: 'full' })).body.data as { version: number };
  /** The accepted document, as the live layer holds it (open_pad's text also quotes the waiting suggestions). */
  const padText = async (padId: string) => (await server.core.sync.read(padId)).map((b) => b.text).join('\n\n');

  beforeAll(async () => {
    server = await startTestServer(store);
    doors = agentDoors(server);
    owner = await newAgent('Owner Bot');
    helper = await newAgent('Helper Bot');
    members = [];
    for (let i = 0; i < 5; i++) members.push(await newAgent(`Member ${i}`));
    person = await signIn(server, 'Twin person', `twin-${randomUUID()}@example.com`);
    twinA = await agentOf(person.cookie, 'Twin A');
    twinB = await agentOf(person.cookie, 'Twin B');
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  it.each(DOORS)('lets only the owner switch modes over %s, and the same mode again changes nothing', async (door) => {
    const hub = await newHub('open');
    const refused = await call(helper, 'set_hub_mode', { hub, mode: 'checked' }, door);
    expect(refused.ok).toBe(false);
    expect(refused.body.error).toBe('forbidden');
    expect(refused.text).toContain('Only the owner');
    const switched = await ok(owner, 'set_hub_mode', { hub, mode: 'checked' }, door);
    expect(switched.body).toMatchObject({ slug: hub, mode: 'checked', changed: true });
    const again = await ok(owner, 'set_hub_mode', { hub, mode: 'checked' }, door);
    expect(again.body.changed).toBe(false);
    expect(again.text).toContain('nothing changed');
    expect((await ok(members[0]!, 'open_hub', { hub }, door)).text).toContain('mode Checked');
  });

  it('refuses an assistant switching modes without a click in the view', async () => {
    const human = await signIn(server, 'Hub person', `hp-${randomUUID()}@example.com`);
    const host = await mcpClient(server, await assistantToken(server, human.cookie));
    try {
      const made = (await host.callTool({ name: 'create_hub', arguments: { name: `Host room ${randomUUID().slice(0, 6)}` } })).structuredContent as { slug: string };
      const refused = await host.callTool({ name: 'set_hub_mode', arguments: { hub: made.slug, mode: 'checked' } });
      expect(refused.isError).toBe(true);
      expect((refused.structuredContent as { error: string }).error).toBe('forbidden');
      expect(await appTool(server, human.cookie, 'set_hub_mode', { hub: made.slug, mode: 'checked' }).then((r) => r.body.data.mode)).toBe('checked');
    } finally {
      await host.close();
    }
  });

  it.each(DOORS)("keeps a member's edit in a Checked hub as a suggestion, never in the pad, over %s", async (door) => {
    const hub = await newHub('checked');
    const pad = await newPad(hub);
    const made = await ok(members[0]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nAlpha stays, mostly.\n\nBeta stays.\n\n# Budget\n\nTen coins.' }, door);
    expect(made.body).toMatchObject({ state: 'waiting', base_version: pad.version, small: true });
    expect(made.body.suggestion_id).toMatch(/^sug_/);
    expect(made.text).toContain('waiting for a check');
    expect(made.text).toContain('verify');
    const read = await fullText(pad.pad_id);
    expect(read.version).toBe(pad.version);
    expect(await padText(pad.pad_id)).not.toContain('mostly');
    const row = await one(sql.unsafe`SELECT author_id, source, state, small, array_length(sections, 1) AS n FROM suggestions WHERE id = ${made.body.suggestion_id}`);
    expect(row).toMatchObject({ author_id: members[0]!.id, source: 'edit', state: 'waiting', small: true, n: 1 });
    // open_pad shows it to a reader who may check it, with its change.
    const opened = await ok(owner, 'open_pad', { pad_id: pad.pad_id }, door);
    expect(opened.body.suggestions.map((s: { id: string }) => s.id)).toContain(made.body.suggestion_id);
    expect(opened.text).toContain(made.body.suggestion_id);
    // The owner hears of it in the inbox, pointed at the pad; its author does not.
    const told = (await ok(owner, 'check_inbox', {}, door)).body.items.filter((item: { kind: string }) => item.kind === 'suggestion');
    expect(told.at(-1)).toMatchObject({ kind: 'suggestion', from: { id: members[0]!.id } });
    expect((await ok(owner, 'check_inbox', {}, door)).text).toContain(pad.pad_id);
    expect((await ok(members[0]!, 'check_inbox', {}, door)).body.items.some((item: { kind: string }) => item.kind === 'suggestion')).toBe(false);
  });

  it('accepts a suggestion: the text goes in as its author, the checker is recorded and the section is marked checked', async () => {
    const hub = await newHub('checked');
    const pad = await newPad(hub);
    const made = await ok(members[1]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, edits: [], inserts: [], text: '# Plan\n\nAlpha goes.\n\nBeta stays.\n\n# Budget\n\nTen coins.' });
    const accepted = await ok(owner, 'verify', { id: made.body.suggestion_id, verdict: 'verify', note: 'Agreed in the call.' });
    expect(accepted.body).toMatchObject({ subject: 'suggestion', state: 'accepted', version: pad.version + 1 });
    expect(await padText(pad.pad_id)).toContain('Alpha goes.');
    const version = await one(sql.unsafe`SELECT actor_id FROM pad_versions WHERE pad_id = ${pad.pad_id} AND version = ${pad.version + 1}`);
    expect(version.actor_id).toBe(members[1]!.id);
    const row = await one(sql.unsafe`SELECT state, decided_by, accepted_version, note FROM suggestions WHERE id = ${made.body.suggestion_id}`);
    expect(row).toMatchObject({ state: 'accepted', decided_by: owner.id, accepted_version: pad.version + 1, note: 'Agreed in the call.' });
    const check = await one(sql.unsafe`SELECT checker_id, author_id, verdict, subject_kind FROM checks WHERE subject_id = ${made.body.suggestion_id}`);
    expect(check).toMatchObject({ checker_id: owner.id, author_id: members[1]!.id, verdict: 'verified', subject_kind: 'suggestion' });
    const marks = await rows(sql.unsafe`SELECT kind, by_id, note, version FROM section_marks WHERE pad_id = ${pad.pad_id}`);
    expect(marks).toEqual([{ kind: 'checked', by_id: owner.id, note: 'Agreed in the call.', version: pad.version + 1 }]);
    // Its author hears of it in the inbox.
    const inbox = await ok(members[1]!, 'check_inbox', {});
    expect(inbox.text).toContain('accepted your suggestion');
    // Deciding it again is refused: it is no longer waiting.
    const again = await call(helper, 'verify', { id: made.body.suggestion_id, verdict: 'turn_down', note: 'Late.' });
    expect(again.body.error).toBe('conflict');
  });

  it('settles a flag on a section when the owner accepts a fix to it', async () => {
    const hub = await newHub('checked');
    const pad = await newPad(hub);
    const budget = (await server.core.sync.read(pad.pad_id)).filter((b) => b.type === 'heading')[1]!.id;
    // Member 0's person confirmed an email: the agent counts as verified and may flag.
    await server.core.db.pool.query(sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = (SELECT linked_human FROM participants WHERE id = ${members[0]!.id})`);
    const flagged = await ok(members[0]!, 'start_thread', { hub, title: 'Budget is wrong', body: 'It is twelve.', pad_id: pad.pad_id, anchor_block: budget, flag: true });
    expect(flagged.body.flag).toBe('open');
    const fix = await ok(members[1]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nAlpha stays.\n\nBeta stays.\n\n# Budget\n\nTwelve coins.' });
    expect((await one(sql.unsafe`SELECT flag FROM threads WHERE id = ${flagged.body.thread_id}`)).flag).toBe('open');
    await ok(owner, 'verify', { id: fix.body.suggestion_id, verdict: 'verify', note: 'Twelve it is.' });
    expect((await one(sql.unsafe`SELECT flag FROM threads WHERE id = ${flagged.body.thread_id}`)).flag).toBe('settled');
  });

  it('turns a suggestion down with a note, and its author withdraws their own', async () => {
    const hub = await newHub('checked');
    const pad = await newPad(hub);
    const first = await ok(members[2]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nGamma.' });
    const second = await ok(members[2]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nDelta.' });
    const down = await ok(helper, 'verify', { id: first.body.suggestion_id, verdict: 'turn_down', note: 'Too much removed.' }, 'mcp');
    expect(down.body.state).toBe('turned_down');
    const own = await ok(members[2]!, 'verify', { id: second.body.suggestion_id, verdict: 'turn_down', note: 'Never mind.' });
    expect(own.body.state).toBe('withdrawn');
    const states = await rows(sql.unsafe`SELECT id, state FROM suggestions WHERE pad_id = ${pad.pad_id} ORDER BY created_at`);
    expect(states.map((r) => (r as { state: string }).state)).toEqual(['turned_down', 'withdrawn']);
    expect((await blocksOf(pad.pad_id)).version).toBe(pad.version);
    expect((await ok(members[2]!, 'check_inbox', {})).text).toContain('Too much removed.');
    // Never verifying one's own.
    const third = await ok(members[2]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nEpsilon.' });
    const self = await call(members[2]!, 'verify', { id: third.body.suggestion_id, verdict: 'verify', note: 'Mine is good.' });
    expect(self.body.error).toBe('forbidden');
    expect(self.text).toContain('own work');
  });

  it('reports a conflict instead of overwriting a block changed since the base, and changes nothing', async () => {
    const hub = await newHub('checked');
    const pad = await newPad(hub);
    const made = await ok(members[3]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nAlpha by the member.\n\nBeta stays.\n\n# Budget\n\nTen coins.' });
    await ok(owner, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nAlpha by the owner.\n\nBeta stays.\n\n# Budget\n\nTen coins.' });
    const refused = await call(helper, 'verify', { id: made.body.suggestion_id, verdict: 'verify', note: 'Fine.' });
    expect(refused.body.error).toBe('conflict');
    expect(refused.body.conflicts).toHaveLength(1);
    const text = await padText(pad.pad_id);
    expect(text).toContain('Alpha by the owner.');
    expect(text).not.toContain('by the member');
    expect((await one(sql.unsafe`SELECT state FROM suggestions WHERE id = ${made.body.suggestion_id}`)).state).toBe('waiting');
  });

  it('holds 5 waiting suggestions per participant and 20 per pad, refused 429 with what to do', async () => {
    const hub = await newHub('checked');
    const pad = await newPad(hub);
    const suggest = (agent: Agent, i: number) => call(agent, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: `# Plan\n\nVersion ${agent.handle} ${i}.` });
    for (let i = 0; i < 5; i++) expect((await suggest(members[0]!, i)).ok).toBe(true);
    const sixth = await suggest(members[0]!, 5);
    expect(sixth.body).toMatchObject({ error: 'rate_limited', limit: 5 });
    expect(sixth.text).toContain('withdraw one of yours');
    for (const agent of members.slice(1, 4)) for (let i = 0; i < 5; i++) expect((await suggest(agent, i)).ok).toBe(true);
    const full = await suggest(members[4]!, 0);
    expect(full.body).toMatchObject({ error: 'rate_limited', limit: 20 });
    // propose: true counts too, whoever makes it.
    const proposed = await call(owner, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: 'Owner proposal.', propose: true });
    expect(proposed.body.error).toBe('rate_limited');
    expect(await rows(sql.unsafe`SELECT 1 FROM suggestions WHERE pad_id = ${pad.pad_id}`)).toHaveLength(20);
  });

  it.each(DOORS)('takes propose: true in an Open hub as a full-text proposal that another member accepts, over %s', async (door) => {
    const hub = await newHub('open');
    const pad = await newPad(hub);
    const proposed = await ok(members[0]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nAlpha proposed.\n\nBeta stays.\n\n# Budget\n\nTen coins.', propose: true }, door);
    expect(proposed.body.state).toBe('waiting');
    expect(proposed.text).toContain('propose: true');
    expect((await blocksOf(pad.pad_id)).version).toBe(pad.version);
    expect((await one(sql.unsafe`SELECT source FROM suggestions WHERE id = ${proposed.body.suggestion_id}`)).source).toBe('proposal');
    // In an Open hub, verify on anything else says only that your own done counts.
    const edit = await ok(owner, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, inserts: [{ after: 'start', text: 'Preface.' }] });
    const elsewhere = await ok(members[1]!, 'verify', { id: edit.body.edit_id, verdict: 'verify', note: 'Looks right.' }, door);
    expect(elsewhere.body).toMatchObject({ subject: 'none', state: 'unchanged' });
    expect(elsewhere.text).toContain('own "done" counts');
    const accepted = await ok(members[1]!, 'verify', { id: proposed.body.suggestion_id, verdict: 'verify', note: 'Yes.' }, door);
    expect(accepted.body.state).toBe('accepted');
    expect(await padText(pad.pad_id)).toContain('Alpha proposed.');
  });

  it('asks members for a track record and refuses checking the work of the same human', async () => {
    const hub = await newHub('checked');
    const pad = await newPad(hub);
    const byTwin = await ok(twinA, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nTwin text.' });
    const byMember = await ok(members[0]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, edits: [], inserts: [{ after: 'start', text: 'Preface by a member.' }] });
    const early = await call(members[4]!, 'verify', { id: byMember.body.suggestion_id, verdict: 'verify', note: 'Fine.' });
    expect(early.body.error).toBe('forbidden');
    expect(early.body.track_record).toMatchObject({ verified: 0, needs: { days: 7, verified: 3 } });
    // Three of twin B's own edits verified by others, and eight days as a member: a track record.
    for (let i = 0; i < 3; i++) {
      const mine = await ok(twinB, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: `# Plan\n\nTwin B ${i}.` });
      // Turned down, not accepted, so the pad keeps its base; only verified work counts.
      await ok(owner, 'verify', { id: mine.body.suggestion_id, verdict: 'turn_down', note: 'Not this.' });
    }
    const realNow = server.core.pace.now;
    server.core.pace.now = () => realNow() + 8 * 86_400_000;
    try {
      const stillNot = await call(twinB, 'verify', { id: byMember.body.suggestion_id, verdict: 'verify', note: 'Fine.' });
      expect(stillNot.body.track_record).toMatchObject({ verified: 0 });
      await server.core.db.pool.query(sql.unsafe`
        INSERT INTO checks (id, hub_id, subject_kind, subject_id, author_id, checker_id, verdict, note)
        SELECT 'chk_test' || g, h.id, 'edit', 'edt_x' || g, ${twinB.id}, ${owner.id}, 'verified', 'Good.' FROM hubs h, generate_series(1, 3) g WHERE h.slug = ${hub}`);
      const linked = await call(twinB, 'verify', { id: byTwin.body.suggestion_id, verdict: 'verify', note: 'My twin is right.' });
      expect(linked.body.error).toBe('forbidden');
      expect(linked.text).toContain('one human');
      const checked = await ok(twinB, 'verify', { id: byMember.body.suggestion_id, verdict: 'verify', note: 'Fine.' });
      expect(checked.body.state).toBe('accepted');
    } finally {
      server.core.pace.now = realNow;
    }
  });

  it('keeps a merged-unchecked decision proposed until verified, and verify finishes a result in review', async () => {
    const hub = await newHub('checked');
    const pad = await newPad(hub);
    const made = await ok(members[0]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nAlpha stays!\n\nBeta stays.\n\n# Budget\n\nTen coins.', decision: 'We keep Alpha.' });
    const merged = await applySuggestion(server.core, null, made.body.suggestion_id, { state: 'merged_unchecked', note: null });
    expect(merged.decision_id).toMatch(/^dec_/);
    const before = await one(sql.unsafe`SELECT proposed, checked_by FROM decisions WHERE id = ${merged.decision_id}`);
    expect(before).toEqual({ proposed: true, checked_by: null });
    expect(await rows(sql.unsafe`SELECT kind FROM section_marks WHERE pad_id = ${pad.pad_id}`)).toEqual([{ kind: 'unchecked' }]);
    const verified = await ok(helper, 'verify', { id: merged.decision_id, verdict: 'verify', note: 'We did agree.' });
    expect(verified.body).toMatchObject({ subject: 'decision', state: 'verified' });
    expect(await one(sql.unsafe`SELECT proposed, checked_by FROM decisions WHERE id = ${merged.decision_id}`)).toEqual({ proposed: false, checked_by: helper.id });

    const thread = (await ok(owner, 'start_thread', { hub, title: 'Work', body: 'Tasks here.' })).body.thread_id as string;
    const task = (await ok(owner, 'create_task', { thread_id: thread, title: 'Write it up', assignee: members[1]!.id })).body;
    const taskId = (task.task_id ?? task.id) as string;
    const handed = await ok(members[1]!, 'submit_result', { task_id: taskId, pad_id: pad.pad_id });
    expect(JSON.stringify(handed.body)).toContain('in_review');
    const own = await call(members[1]!, 'verify', { id: taskId, verdict: 'verify', note: 'Done by me.' });
    expect(own.body.error).toBe('forbidden');
    const done = await ok(owner, 'verify', { id: taskId, verdict: 'verify', note: 'Read it, good.' });
    expect(done.body).toMatchObject({ subject: 'result', state: 'verified' });
    expect((await one(sql.unsafe`SELECT state FROM tasks WHERE id = ${taskId}`)).state).toBe('done');

    // A result turned down goes back to its holder.
    const again = (await ok(owner, 'create_task', { thread_id: thread, title: 'Check the sums', assignee: members[1]!.id })).body;
    const againId = (again.task_id ?? again.id) as string;
    await ok(members[1]!, 'submit_result', { task_id: againId, url: 'https://example.org/sums' });
    const back = await ok(helper, 'verify', { id: againId, verdict: 'turn_down', note: 'The sums are off.' });
    expect(back.body).toMatchObject({ subject: 'result', state: 'turned_down' });
    expect(await one(sql.unsafe`SELECT state, note FROM tasks WHERE id = ${againId}`)).toEqual({ state: 'in_progress', note: 'The sums are off.' });

    // A decision sent with a suggestion counts once someone accepts it, with who checked it.
    const withDecision = await ok(members[2]!, 'edit_pad', { pad_id: pad.pad_id, base_version: merged.version!, inserts: [{ after: 'start', text: 'Decided on Monday.' }], edits: [], decision: 'Monday it is.' });
    await ok(owner, 'verify', { id: withDecision.body.suggestion_id, verdict: 'verify', note: 'Yes.' });
    expect(await one(sql.unsafe`SELECT decided_by, proposed, checked_by FROM decisions WHERE text = 'Monday it is.'`)).toEqual({ decided_by: members[2]!.id, proposed: false, checked_by: owner.id });
  });

  it('verifying an edit records the check and marks its sections checked', async () => {
    const hub = await newHub('checked');
    const pad = await newPad(hub);
    const edit = await ok(owner, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nAlpha stays.\n\nBeta stays.\n\n# Budget\n\nEleven coins.' });
    const self = await call(owner, 'verify', { id: edit.body.edit_id, verdict: 'verify', note: 'Mine.' });
    expect(self.body.error).toBe('forbidden');
    const checked = await ok(helper, 'verify', { id: edit.body.edit_id, verdict: 'verify', note: 'Sums add up.' });
    expect(checked.body).toMatchObject({ subject: 'edit', state: 'verified', version: edit.body.version });
    expect(await rows(sql.unsafe`SELECT kind, by_id, note FROM section_marks WHERE pad_id = ${pad.pad_id}`)).toEqual([{ kind: 'checked', by_id: helper.id, note: 'Sums add up.' }]);
  });

  it('makes every edit of a section under an edit war a suggestion, until someone outside the war accepts one', async () => {
    const hub = await newHub('open');
    const pad = await newPad(hub);
    const [plan] = (await server.core.sync.read(pad.pad_id)).filter((b) => b.type === 'heading').map((b) => b.id) as [string];
    // The war's parties: the owner and member 0 (as humans stand for their agents, here each agent's own id).
    const humans = await server.core.db.pool.anyFirst(sql.type(z.object({ h: z.string() }))`
      SELECT coalesce(linked_human, id) AS h FROM participants WHERE id IN (${owner.id}, ${members[0]!.id})`);
    await server.core.db.pool.query(sql.unsafe`
      INSERT INTO section_marks (pad_id, section_id, kind, version, parties) VALUES (${pad.pad_id}, ${plan}, 'edit_war', ${pad.version}, ${sql.array([...humans], 'text')})`);
    const inWar = await ok(owner, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nAlpha, says the owner.\n\nBeta stays.\n\n# Budget\n\nTen coins.' });
    expect(inWar.body.state).toBe('waiting');
    expect(inWar.text).toContain('edit war');
    // The other section edits live as before.
    const elsewhere = await ok(owner, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: '# Plan\n\nAlpha stays.\n\nBeta stays.\n\n# Budget\n\nNine coins.' });
    expect(elsewhere.body.edit_id).toMatch(/^edt_/);
    // A party accepting keeps the war; someone outside it ends it.
    const byParty = await ok(members[1]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, inserts: [{ after: plan, text: 'A note.' }], edits: [] });
    await ok(members[0]!, 'verify', { id: byParty.body.suggestion_id, verdict: 'verify', note: 'Fine by me.' });
    expect(await rows(sql.unsafe`SELECT 1 FROM section_marks WHERE pad_id = ${pad.pad_id} AND kind = 'edit_war'`)).toHaveLength(1);
    await ok(members[2]!, 'verify', { id: inWar.body.suggestion_id, verdict: 'verify', note: 'Settling it.' });
    expect(await rows(sql.unsafe`SELECT 1 FROM section_marks WHERE pad_id = ${pad.pad_id} AND kind = 'edit_war'`)).toHaveLength(0);
    expect(await padText(pad.pad_id)).toContain('Alpha, says the owner.');
  });

  it("shows the suggestions waiting on a checker in show_dotpad and the web app's review queue, never one's own", async () => {
    const ownerPerson = await signIn(server, 'Queue owner', `qo-${randomUUID()}@example.com`);
    const slug = (await appTool(server, ownerPerson.cookie, 'create_hub', { name: `Queue ${randomUUID().slice(0, 6)}` })).body.data.slug as string;
    for (const agent of [members[0]!, members[1]!]) {
      await ok(agent, 'join_hub', { hub: slug });
      await appTool(server, ownerPerson.cookie, 'moderate', { hub: slug, action: 'let_in', who: agent.id });
    }
    await appTool(server, ownerPerson.cookie, 'set_hub_mode', { hub: slug, mode: 'checked' });
    const pad = (await appTool(server, ownerPerson.cookie, 'create_pad', { hub: slug, title: 'Queue pad', text: 'One line here.' })).body.data;
    const made = await ok(members[0]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: 'One line there.' });
    const queue = await appTool(server, ownerPerson.cookie, 'ui_review_queue', {});
    expect(queue.status).toBe(200);
    const [waiting] = queue.body.view.suggestions;
    expect(waiting).toMatchObject({ id: made.body.suggestion_id, pad_title: 'Queue pad', hub: { slug }, author: { id: members[0]!.id } });
    expect(waiting.changes).toEqual([{ block_id: expect.any(String), change: 'changed', text: 'One line there.', before: 'One line here.' }]);
    const home = await appTool(server, ownerPerson.cookie, 'show_dotpad', {});
    expect(home.body.data.suggestions).toEqual([{ id: made.body.suggestion_id, pad_id: pad.pad_id, hub: slug, small: expect.any(Boolean) }]);
    expect(home.body.text).toContain('Suggestions waiting on you');
    // Not to its author, nor to a member without a track record.
    expect((await ok(members[0]!, 'show_dotpad', {})).body.suggestions).toBeUndefined();
    expect((await ok(members[1]!, 'show_dotpad', {})).body.suggestions).toBeUndefined();
    // ui_review_queue is the web app's: not a model tool.
    expect((await rest(server, members[0]!.key, 'ui_review_queue', {})).status).toBe(404);
  });

  it('refuses an assistant verifying without a click in the view', async () => {
    const human = await signIn(server, 'Checker person', `cp-${randomUUID()}@example.com`);
    const slug = (await appTool(server, human.cookie, 'create_hub', { name: `Host check ${randomUUID().slice(0, 6)}` })).body.data.slug as string;
    await ok(members[0]!, 'join_hub', { hub: slug });
    await appTool(server, human.cookie, 'moderate', { hub: slug, action: 'let_in', who: members[0]!.id });
    await appTool(server, human.cookie, 'set_hub_mode', { hub: slug, mode: 'checked' });
    const pad = (await appTool(server, human.cookie, 'create_pad', { hub: slug, title: 'Host pad', text: 'Text.' })).body.data;
    const made = await ok(members[0]!, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: 'Better text.' });
    const host = await mcpClient(server, await assistantToken(server, human.cookie));
    try {
      const refused = await host.callTool({ name: 'verify', arguments: { id: made.body.suggestion_id, verdict: 'verify', note: 'Looks fine.' } });
      expect(refused.isError).toBe(true);
      expect((refused.structuredContent as { error: string }).error).toBe('forbidden');
      expect((await one(sql.unsafe`SELECT state FROM suggestions WHERE id = ${made.body.suggestion_id}`)).state).toBe('waiting');
      // The assistant may propose: its answer is what the listed output schema says (the SDK checks it).
      await host.listTools();
      const proposed = await host.callTool({ name: 'edit_pad', arguments: { pad_id: pad.pad_id, base_version: pad.version, text: 'Text, proposed.', propose: true } });
      expect(proposed.isError).toBeFalsy();
      expect(proposed.structuredContent).toMatchObject({ state: 'waiting', base_version: pad.version });
    } finally {
      await host.close();
    }
    // The person, on the web, may.
    expect((await appTool(server, human.cookie, 'verify', { id: made.body.suggestion_id, verdict: 'verify', note: 'Looks fine.' })).body.data.state).toBe('accepted');
  });

  it('lists verify on GET /api/v1/tools only to Checked-hub members, never in /openapi.json, always in tools/list', async () => {
    const stranger = await newAgent('Stranger');
    const names = async (key?: string) =>
      ((await request(`${server.url}/api/v1/tools`, key ? { headers: { authorization: `Bearer ${key}` } } : {})).body.tools as { name: string }[]).map((t) => t.name);
    expect(await names()).not.toContain('verify');
    expect(await names(stranger.key)).not.toContain('verify');
    await newHub('checked');
    expect(await names(members[0]!.key)).toContain('verify');
    expect(await names(members[0]!.key)).toContain('set_hub_mode');
    const openapi = (await request(`${server.url}/openapi.json`)).body;
    expect(Object.keys(openapi.paths)).not.toContain('/api/v1/tools/verify');
    expect(Object.keys(openapi.paths)).toContain('/api/v1/tools/set_hub_mode');
    const client = await mcpClient(server, stranger.key);
    try {
      const listed = (await client.listTools()).tools.map((t) => t.name);
      expect(listed).toContain('verify');
      expect(listed).toContain('set_hub_mode');
    } finally {
      await client.close();
    }
  });
});
