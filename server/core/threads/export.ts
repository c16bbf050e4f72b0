import { sql } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, notFound } from '../../../schema/errors.ts';
import { renderBody } from '../kernel/framing.ts';
import { padContent, readablePad } from '../pads/pads.ts';
import { spendEvent } from '../limits/participantEvents.ts';
import { loadPosts, type PostView } from './posts.ts';
import { line, said } from '../kernel/result.ts';
import { readableThread } from './threadAccess.ts';
import { wholeText } from '../pads/sections.ts';
import { loadTask, type Task } from '../tasks/tasks.ts';

export const EXPORTS_PER_MINUTE = 3;
/** A thread is exported whole, up to this many posts (the newest when it has more). */
const MAX_EXPORTED_POSTS = 5_000;

export type Exported = { filename: string; type: 'text/markdown' | 'application/json'; body: string };

const iso = (t: number) => new Date(t).toISOString();

/** The front matter of an exported file: YAML with JSON-quoted values, as the Markdown views write it. */
const frontMatter = (fields: Record<string, string | number>) =>
  ['---', ...Object.entries(fields).map(([key, value]) => `${key}: ${JSON.stringify(value)}`), '---'].join('\n');

function postJson(post: PostView) {
  return {
    id: post.id,
    seq: post.seq,
    author: post.author,
    created: iso(post.created_at),
    body: post.body,
    ...(post.reply_to ? { reply_to: post.reply_to } : {}),
    ...(post.is_answer ? { is_answer: true } : {}),
    ...(post.folded ? { folded: post.folded } : {}),
    ...(Object.keys(post.reactions).length ? { reactions: post.reactions } : {}),
  };
}

/**
 * One item the caller may read, whole, as a file: a thread with every post, a pad's text, or a task. Three
 * a minute per caller; what the caller may not read (or what does not exist) is one 404.
 */
export async function exportItem(core: Core, actor: Actor, id: string, format: 'md' | 'json'): Promise<Exported> {
  await core.db.write((tx) => spendEvent(tx, actor.id, 'export', EXPORTS_PER_MINUTE, 60_000, `Exports are ${EXPORTS_PER_MINUTE} a minute.`));
  const conn = core.db.pool;
  const filename = `svc-${id}.${format}`;
  if (id.startsWith('thr_')) {
    const { thread, hub } = await readableThread(core, conn, id, actor);
    const posts = await loadPosts(conn, thread, { beforeSeq: thread.post_count + 1, limit: MAX_EXPORTED_POSTS });
    if (format === 'json') {
      const body = { type: 'thread', id: thread.id, title: thread.title, status: thread.status, hub: { slug: hub.slug, name: hub.name }, version: thread.version, posts: posts.map(postJson) };
      return { filename, type: 'application/json', body: JSON.stringify(body, null, 2) };
    }
    const parts = [line(`# ${thread.title}`), line(''), line(`In ${hub.name} (${core.config.baseUrl}/h/${hub.slug}) · ${thread.status} · ${thread.post_count} posts`)];
    for (const post of posts) {
      parts.push(line(''), line(`**${post.author.name}**${post.author.kind === 'agent' ? ' (agent)' : ''} · ${iso(post.created_at)} · ${post.id} · seq ${post.seq}`));
      parts.push(said(post.body));
    }
    const head = frontMatter({ id: thread.id, type: 'thread', version: String(thread.version), exported: new Date().toISOString() });
    return { filename, type: 'text/markdown', body: `${head}\n${renderBody(parts)}\n` };
  }
  if (id.startsWith('pad_')) {
    const { pad, hub } = await readablePad(core, conn, id, actor);
    const { blocks, version } = await padContent(core, pad.id);
    if (format === 'json') {
      const body = { type: 'pad', id: pad.id, title: pad.title, version, hub: { slug: hub.slug, name: hub.name }, blocks: blocks.map((b) => ({ id: b.id, text: b.text })) };
      return { filename, type: 'application/json', body: JSON.stringify(body, null, 2) };
    }
    // The pad's own Markdown: the file is the document, for whoever exported it.
    const head = frontMatter({ id: pad.id, type: 'pad', version, title: pad.title, hub: hub.slug, exported: new Date().toISOString() });
    return { filename, type: 'text/markdown', body: `${head}\n${wholeText(blocks)}\n` };
  }
  if (id.startsWith('tsk_')) return exportTask(core, actor, id, format, filename);
  throw notFound('Nothing readable has this id; export takes a thread (thr_…), a pad (pad_…) or a task id.');
}

const NO_TASK = 'No such task, or it is private: list_tasks shows the tasks you can see.';

/** A task, readable where its thread is: what it asks, who holds and reviews it, and its result. */
async function exportTask(core: Core, actor: Actor, id: string, format: 'md' | 'json', filename: string): Promise<Exported> {
  const conn = core.db.pool;
  const task = await loadTask(conn, id);
  if (!task) throw notFound(NO_TASK);
  const { hub } = await readableThread(core, conn, task.thread_id, actor).catch((error: unknown) => {
    throw error instanceof AppError && error.code === 'not_found' ? notFound(NO_TASK) : error;
  });
  const result = taskResult(task);
  if (format === 'json') {
    const body = {
      type: 'task',
      id: task.id,
      title: task.title,
      state: task.state,
      thread: { id: task.thread_id, title: task.thread_title },
      hub: { slug: hub.slug, name: hub.name },
      details: task.details,
      created_by: task.created_by,
      ...(task.assignee ? { assignee: task.assignee } : {}),
      ...(task.reviewer ? { reviewer: task.reviewer } : {}),
      ...(result ? { result } : {}),
      ...(task.note ? { note: task.note } : {}),
      created: iso(task.created_at),
      updated: iso(task.updated_at),
    };
    return { filename, type: 'application/json', body: JSON.stringify(body, null, 2) };
  }
  const who = (person: Task['created_by']) => `${person.name} (${person.handle})`;
  const parts = [
    line(`# ${task.title}`),
    line(''),
    line(`In the thread ${task.thread_title} (${core.config.baseUrl}/t/${task.thread_id}) of ${hub.name} · ${task.state}`),
    line(`Asked by ${who(task.created_by)}${task.assignee ? ` · for ${who(task.assignee)}` : ' · open to anyone in the thread'}${task.reviewer ? ` · reviewed by ${who(task.reviewer)}` : ''}`),
  ];
  if (task.details) parts.push(line(''), line('## Details'), said(task.details));
  if (result) {
    parts.push(line(''), line('## Result'), line([result.pad_id && `pad ${result.pad_id}${result.block_id ? ` section ${result.block_id}` : ''}`, result.url].filter(Boolean).join(' · ')));
    if (result.note) parts.push(said(result.note));
  }
  if (task.note) parts.push(line(''), line('## Last note'), said(task.note));
  const head = frontMatter({ id: task.id, type: 'task', state: task.state, thread: task.thread_id, hub: hub.slug, exported: new Date().toISOString() });
  return { filename, type: 'text/markdown', body: `${head}\n${renderBody(parts)}\n` };
}

/** The result handed in, if any: a pad (and section) or a link, with its note. */
function taskResult(task: Task) {
  if (task.result_pad === null && task.result_url === null) return null;
  return {
    ...(task.result_pad ? { pad_id: task.result_pad } : {}),
    ...(task.result_block ? { block_id: task.result_block } : {}),
    ...(task.result_url ? { url: task.result_url } : {}),
    ...(task.result_note ? { note: task.result_note } : {}),
  };
}

const AccountRow = z.object({ id: z.string(), kind: z.string(), name: z.string(), handle: z.string(), email: z.string().nullable(), created_at: z.number() });

/**
 * Everything the service keeps about a person (`svc-account.json`): their record, their agents, the
 * credentials they and their agents hold (never a secret or its hash), their seats and requests, and
 * what they wrote.
 */
export async function exportAccount(core: Core, person: Actor) {
  await core.db.write((tx) => spendEvent(tx, person.id, 'export', EXPORTS_PER_MINUTE, 60_000, `Exports are ${EXPORTS_PER_MINUTE} a minute.`));
  const conn = core.db.pool;
  const [account, agents, credentials, seats, requests, posts, pads] = await Promise.all([
    conn.one(sql.type(AccountRow)`SELECT id, kind, name, handle, email, created_at FROM participants WHERE id = ${person.id}`),
    conn.any(sql.type(AccountRow)`SELECT id, kind, name, handle, email, created_at FROM participants WHERE linked_human = ${person.id} ORDER BY created_at`),
    conn.any(sql.type(z.object({ id: z.string(), participant_id: z.string(), kind: z.string(), origin: z.string(), created_at: z.number(), expires_at: z.number(), revoked_at: z.number().nullable() }))`
      SELECT c.id, c.participant_id, c.kind, c.origin, c.created_at, c.expires_at, c.revoked_at
      FROM credentials c JOIN participants p ON p.id = c.participant_id
      WHERE p.id = ${person.id} OR p.linked_human = ${person.id} ORDER BY c.created_at`),
    conn.any(sql.type(z.object({ hub_id: z.string(), slug: z.string(), name: z.string(), role: z.string(), joined_at: z.number() }))`
      SELECT m.hub_id, h.slug, h.name, m.role, m.joined_at FROM hub_members m JOIN hubs h ON h.id = m.hub_id
      WHERE m.participant_id = ${person.id} ORDER BY m.joined_at`),
    conn.any(sql.type(z.object({ hub_id: z.string(), note: z.string(), created_at: z.number() }))`
      SELECT hub_id, note, created_at FROM join_requests WHERE participant_id = ${person.id} ORDER BY created_at`),
    conn.any(sql.type(z.object({ id: z.string(), thread_id: z.string(), seq: z.number(), body: z.string(), created_at: z.number() }))`
      SELECT id, thread_id, seq, body, created_at FROM posts WHERE author_id = ${person.id} ORDER BY created_at`),
    conn.any(sql.type(z.object({ id: z.string(), title: z.string(), hub_id: z.string(), created_at: z.number() }))`
      SELECT id, title, hub_id, created_at FROM pads WHERE created_by = ${person.id} ORDER BY created_at`),
  ]);
  const stamp = <T extends Record<string, unknown>>(row: T) =>
    Object.fromEntries(Object.entries(row).map(([key, value]) => [key, key.endsWith('_at') && typeof value === 'number' ? iso(value) : value]));
  return {
    exported: new Date().toISOString(),
    account: stamp(account),
    agents: agents.map(stamp),
    credentials: credentials.map(stamp),
    seats: seats.map(stamp),
    join_requests: requests.map(stamp),
    posts: posts.map(stamp),
    pads: pads.map(stamp),
  };
}
