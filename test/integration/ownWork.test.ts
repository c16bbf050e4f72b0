import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appTool, registerAgent, request, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * People change what they made (issue 21, items 5 and 7), through the web app's own-work tools:
 * editing and deleting one's post (20 edits a post), renaming a hub, thread or pad, deleting a pad or
 * a hub after a look at what goes with it; and names over their size are refused, never cut.
 */
describe.each(stores())('own work on %s', (store) => {
  let server: TestServer;
  let owner: { cookie: string; id: string };
  let helper: { cookie: string; id: string };
  let member: { cookie: string; id: string };
  let other: { cookie: string; id: string };
  const hub = { id: '', slug: '' };
  let threadId = '';

  const call = (who: { cookie: string }, tool: string, args: unknown) => appTool(server, who.cookie, tool, args);
  const markdown = (who: { cookie: string }, path: string) => request(`${server.url}${path}`, { headers: { accept: 'text/markdown', cookie: who.cookie } });
  const postOf = async (who: { cookie: string }, postId: string) =>
    (await call(who, 'open_thread', { thread_id: threadId })).body.view.posts.find((p: { id: string }) => p.id === postId);

  beforeAll(async () => {
    server = await startTestServer(store);
    owner = await signIn(server, 'Owner Ora', 'ora@example.test');
    helper = await signIn(server, 'Helper Hob', 'hob@example.test');
    member = await signIn(server, 'Member Moe', 'moe@example.test');
    other = await signIn(server, 'Other Oli', 'oli@example.test');
    const made = await call(owner, 'create_hub', { name: 'Garden Club' });
    Object.assign(hub, { id: made.body.data.hub_id, slug: made.body.data.slug });
    for (const who of [helper, member, other]) {
      await call(who, 'join_hub', { hub: hub.slug });
      expect((await call(owner, 'moderate', { hub: hub.slug, action: 'let_in', who: who.id })).status).toBe(200);
    }
    expect((await call(owner, 'moderate', { hub: hub.slug, action: 'name_helper', who: helper.id })).status).toBe(200);
    threadId = (await call(member, 'start_thread', { hub: hub.slug, title: 'Roses in spring', body: 'When do we prune?' })).body.data.thread_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('the author edits their post, it shows as edited everywhere, and nobody else can edit it', async () => {
    const postId = (await call(member, 'post_reply', { thread_id: threadId, body: 'Prune in Febuary.' })).body.data.post_id;
    const edited = await call(member, 'ui_edit_post', { post_id: postId, body: 'Prune in February.' });
    expect(edited.status).toBe(200);
    expect(edited.body.data).toMatchObject({ post_id: postId, edits: 1, edits_left: 19, changed: true });
    expect(await postOf(other, postId)).toMatchObject({ body: 'Prune in February.', edited: true });
    const md = await markdown(other, `/t/${threadId}`);
    expect(md.text).toContain('Prune in February.');
    expect(md.text).toMatch(new RegExp(`${postId} · seq \\d+ · edited`));

    for (const who of [owner, helper, other]) {
      const refused = await call(who, 'ui_edit_post', { post_id: postId, body: 'Not mine to change.' });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('forbidden');
      expect(refused.body.message).toContain('post_reply');
    }
    expect((await postOf(owner, postId)).body).toBe('Prune in February.');
    // An agent's key never reaches an app-only tool.
    const agent = await registerAgent(server, 'Rex');
    expect((await rest(server, agent.key, 'ui_edit_post', { post_id: postId, body: 'x' })).status).toBe(404);
  });

  it('a post takes 20 edits: the 21st is refused, changes nothing and says what to do', async () => {
    const postId = (await call(member, 'post_reply', { thread_id: threadId, body: 'Draft 0' })).body.data.post_id;
    for (let n = 1; n <= 20; n++) expect((await call(member, 'ui_edit_post', { post_id: postId, body: `Draft ${n}` })).status).toBe(200);
    const refused = await call(member, 'ui_edit_post', { post_id: postId, body: 'Draft 21' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'conflict', edits: 20, limit: 20 });
    expect(refused.body.message).toContain('post_reply with the correction');
    expect((await postOf(member, postId)).body).toBe('Draft 20');
  });

  it('the author deletes their post: it reads (deleted) on the thread, in Markdown and in search; others cannot', async () => {
    const postId = (await call(member, 'post_reply', { thread_id: threadId, body: 'Marmalade secret recipe' })).body.data.post_id;
    const refused = await call(other, 'ui_delete_post', { post_id: postId });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('report');
    expect((await call(other, 'search_dotpad', { q: 'marmalade' })).text).toContain(postId);

    expect((await call(member, 'ui_delete_post', { post_id: postId })).body.data).toMatchObject({ post_id: postId, changed: true });
    expect(await postOf(other, postId)).toMatchObject({ deleted: true, body: '' });
    const md = await markdown(other, `/t/${threadId}`);
    expect(md.text).not.toContain('Marmalade');
    expect(md.text.slice(md.text.indexOf(postId))).toMatch(/^[^\n]*\n\(deleted\)/);
    const one = await markdown(other, `/t/${threadId}/m/${postId}`);
    expect(one.text).toContain('(deleted)');
    expect((await call(other, 'search_dotpad', { q: 'marmalade' })).text).not.toContain(postId);
    // Deleted stays deleted: it cannot be edited back.
    expect((await call(member, 'ui_edit_post', { post_id: postId, body: 'Back again' })).status).toBe(409);
  });

  it('renames: the starter a thread, the maker a pad, owner and helpers the hub, which keeps its slug', async () => {
    expect((await call(other, 'ui_rename', { item: threadId, name: 'Not my thread' })).status).toBe(403);
    const renamed = await call(member, 'ui_rename', { item: threadId, name: 'Pruning roses' });
    expect(renamed.body.data).toMatchObject({ kind: 'thread', id: threadId, changed: true });
    expect((await call(other, 'open_thread', { thread_id: threadId })).body.view.thread.title).toBe('Pruning roses');

    const padId = (await call(member, 'create_pad', { hub: hub.slug, title: 'Plan' })).body.data.pad_id;
    expect((await call(other, 'ui_rename', { item: padId, name: 'Hijacked' })).status).toBe(403);
    expect((await call(member, 'ui_rename', { item: padId, name: 'Planting plan' })).status).toBe(200);
    expect((await call(helper, 'ui_rename', { item: padId, name: 'Planting plan 2026' })).status).toBe(200);
    expect((await call(other, 'open_pad', { pad_id: padId })).body.view.pad.title).toBe('Planting plan 2026');

    const notMember = await call(member, 'ui_rename', { item: hub.slug, name: 'Members Club' });
    expect(notMember.status).toBe(403);
    expect(notMember.body.message).toContain('owner and helpers');
    expect((await call(helper, 'ui_rename', { item: hub.slug, name: 'Rose Growers' })).body.data).toMatchObject({ kind: 'hub', slug: hub.slug, changed: true });
    // The old name's links (the slug, made from it) still open the hub, under its new name.
    const page = await markdown(other, `/h/${hub.slug}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Rose Growers');
    expect((await call(other, 'open_hub', { hub: hub.slug })).body.view.hub.name).toBe('Rose Growers');
  });

  it('names over 200 characters are refused in the spec shape, in plain words, and nothing is cut or made', async () => {
    const long = 'N'.repeat(236);
    const hubs = await call(owner, 'create_hub', { name: long });
    expect(hubs.status).toBe(413);
    expect(hubs.body.error).toBe('too_large');
    expect(hubs.body.issues).toEqual([{ path: 'name', message: 'Names are at most 200 characters; this one has 236.' }]);
    expect((await call(owner, 'ui_my_hubs', {})).text).not.toContain('NNNN');

    const pad = await call(owner, 'create_pad', { hub: hub.slug, title: long });
    expect(pad.status).toBe(413);
    expect(pad.body.issues[0].message).toBe('Titles are at most 200 characters; this one has 236.');
    const thread = await call(owner, 'start_thread', { hub: hub.slug, title: long, body: 'Hi' });
    expect(thread.status).toBe(413);
    const rename = await call(owner, 'ui_rename', { item: threadId, name: long });
    expect(rename.status).toBe(413);
    expect((await call(owner, 'open_thread', { thread_id: threadId })).body.view.thread.title).toBe('Pruning roses');
    expect((await call(owner, 'open_hub', { hub: hub.slug })).text).not.toContain('NNNN');
  });

  it('a pad is deleted by its maker or the hub owner and helpers, after a look at what goes with it', async () => {
    const padId = (await call(member, 'create_pad', { hub: hub.slug, title: 'Old notes' })).body.data.pad_id;
    expect((await call(other, 'ui_delete_pad', { pad_id: padId, confirm: true })).status).toBe(403);
    const look = await call(member, 'ui_delete_pad', { pad_id: padId });
    expect(look.body.data).toMatchObject({ kind: 'pad', id: padId, deleted: false, threads: 0, tasks: 0 });
    expect(look.body.view).toEqual({ kind: 'pad', name: 'Old notes' });
    expect((await call(other, 'open_pad', { pad_id: padId })).status).toBe(200);

    expect((await call(member, 'ui_delete_pad', { pad_id: padId, confirm: true })).body.data.deleted).toBe(true);
    expect((await call(owner, 'open_pad', { pad_id: padId })).status).toBe(404);
    expect((await markdown(owner, `/p/${padId}`)).status).toBe(404);
    const listed = await call(owner, 'open_hub', { hub: hub.slug });
    expect(listed.text).not.toContain(padId);
  });

  it('a hub is deleted by its owner alone, after a confirmation that counts its threads, pads and tasks', async () => {
    const made = await call(owner, 'create_hub', { name: 'Short lived' });
    const slug = made.body.data.slug;
    await call(helper, 'join_hub', { hub: slug });
    await call(owner, 'moderate', { hub: slug, action: 'let_in', who: helper.id });
    await call(owner, 'moderate', { hub: slug, action: 'name_helper', who: helper.id });
    const thread = (await call(owner, 'start_thread', { hub: slug, title: 'A thread', body: 'Hello' })).body.data.thread_id;
    await call(owner, 'start_thread', { hub: slug, title: 'Another', body: 'Hello again' });
    await call(owner, 'create_pad', { hub: slug, title: 'A pad' });
    await call(owner, 'create_task', { thread_id: thread, title: 'Water the roses' });

    const byHelper = await call(helper, 'ui_delete_hub', { hub: slug, confirm: true });
    expect(byHelper.status).toBe(403);
    expect(byHelper.body.message).toContain('Only the owner');
    const look = await call(owner, 'ui_delete_hub', { hub: slug });
    expect(look.body.data).toMatchObject({ kind: 'hub', deleted: false, threads: 2, pads: 1, tasks: 1 });
    expect(look.body.text ?? look.text).toContain('2 threads, 1 pad and 1 task');
    expect((await call(owner, 'open_hub', { hub: slug })).status).toBe(200);

    expect((await call(owner, 'ui_delete_hub', { hub: slug, confirm: true })).body.data.deleted).toBe(true);
    expect((await call(owner, 'open_hub', { hub: slug })).status).toBe(404);
    expect((await call(helper, 'open_thread', { thread_id: thread })).status).toBe(404);
    expect((await markdown(owner, `/h/${slug}`)).status).toBe(404);
    expect((await call(owner, 'ui_my_hubs', {})).text).not.toContain(slug);
    expect((await call(owner, 'list_tasks', {})).text).not.toContain('Water the roses');
    expect((await call(owner, 'search_dotpad', { q: 'thread' })).text).not.toContain(thread);
    // Its slug stays taken: an old link never opens somebody else's new hub.
    expect((await call(other, 'create_hub', { name: 'Short lived', slug })).status).toBe(409);
  });
});
