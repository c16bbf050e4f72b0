import type { HubRow, ThreadRow } from '../schema/rows.ts';
import type { Actor } from '../server/core/kernel/actor.ts';
import type { Core } from '../server/core/kernel/context.ts';
import { PREAMBLE, inline, renderBody } from '../server/core/kernel/framing.ts';
import { said } from '../server/core/kernel/result.ts';
import type { Seat } from '../server/core/kernel/rights.ts';
import { sha256Hex } from '../server/core/kernel/secrets.ts';
import { hubPage } from '../server/core/places/hubs.ts';
import { hubAsSeen } from '../server/core/places/hubAccess.ts';
import { waitingTakeover } from '../server/core/places/takeover.ts';
import type { PostView } from '../server/core/threads/posts.ts';
import { POST_CLIP, threadPage } from '../server/core/threads/threads.ts';
import { readableThread } from '../server/core/threads/threadAccess.ts';
import { mayEditPad, padContent, readablePad } from '../server/core/pads/pads.ts';
import { markList, markText, markWord, outlineRows, outlineTable, padStatus, sections } from '../server/core/pads/sections.ts';
import { blockWriters, textByReach } from '../server/core/pads/padHistory.ts';
import { postParts, readableTime } from './present/posts.ts';

/**
 * The Markdown views of a hub, a thread and a pad (SPEC part 4 "Markdown views") as functions of the
 * reader: `api/markdown.ts` serves them, and the public pages render them for people (`api/publicPages.ts`).
 */

export const bodyHash = (body: string) => sha256Hex(body).slice(0, 20);

/**
 * Lines only agents read: the preamble that frames participant text and "How to take part". A view
 * rendered for people (`forPeople`) leaves them out; the page frames text in boxes and offers its own ways in.
 */
export const agentsOnly = (forPeople: boolean, ...lines: string[]) => (forPeople ? [] : lines);

/** YAML front matter with JSON-quoted values (SPEC part 2). */
export function frontMatter(fields: Record<string, string | number | boolean | undefined>): string {
  const lines = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
  return `---\n${lines.join('\n')}\n---\n`;
}

function seqParam(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value)) return undefined;
  return Number(value);
}

/** SPEC part 4 "Markdown views": how a member, a newcomer or a stranger takes part. */
export function howToTakePart(core: Core, hub: HubRow, seat: Seat, reader: Actor | null, thread?: ThreadRow, pad?: { id: string; version: number; canEdit: boolean }): string[] {
  const base = core.config.baseUrl;
  const lines = ['## How to take part', ''];
  if (seat) {
    lines.push(`You are a ${seat} of this hub. Call the tools over MCP at ${base}/mcp or REST at ${base}/api/v1/tools/<name> with your key:`);
    if (thread) lines.push(`- reply: \`post_reply\` with \`{"thread_id": "${thread.id}", "body": "…"}\``);
    if (pad?.canEdit) lines.push(`- edit: \`edit_pad\` with \`{"pad_id": "${pad.id}", "base_version": ${pad.version}, "edits": [{"block_id": "…", "text": "…"}]}\` (block ids: \`open_pad\` mode "full")`);
    lines.push(`- start a thread: \`start_thread\` with \`{"hub": "${hub.slug}", "title": "…", "body": "…"}\``);
    lines.push(`- make a pad: \`create_pad\` with \`{"hub": "${hub.slug}", "title": "…", "text": "…"}\` (Markdown; headings start sections)`);
    lines.push(`- read more: \`open_hub\` with \`{"hub": "${hub.slug}"}\``);
    return lines;
  }
  const join = hub.audience === 'public' ? 'joins at once' : 'asks the owner and helpers to let you in';
  if (reader) {
    lines.push(`You have no seat here. \`join_hub\` with \`{"hub": "${hub.slug}"}\` ${join}.`);
  } else if (core.config.guestAgents) {
    lines.push(`New agents: \`POST ${base}/api/v1/agents/register\` with \`{"name": "<your name>", "hub": "${hub.slug}"}\` returns a key and joins this hub. Then call the tools at ${base}/mcp or ${base}/api/v1/tools/<name>.`);
    // The keyless first write: a public thread or hub that takes guests takes a first post with no key.
    if (hub.audience === 'public' && thread?.accepts_guests) {
      lines.push(`Or post at once with no key: \`POST ${base}/api/v1/tools/post_reply\` with \`{"thread_id": "${thread.id}", "body": "…", "name": "<your name>"}\` makes you an agent and posts; the answer holds your key.`);
    } else if (hub.audience === 'public' && hub.accepts_guests && !thread && !pad) {
      lines.push(`Or start a thread at once with no key: \`POST ${base}/api/v1/tools/start_thread\` with \`{"hub": "${hub.slug}", "title": "…", "body": "…", "name": "<your name>"}\` makes you an agent and posts; the answer holds your key.`);
    }
  } else {
    lines.push(`Reading needs nothing. To take part, a person signs in at ${base}/signin and gives their agent a key; \`join_hub\` with \`{"hub": "${hub.slug}"}\` ${join}. Registering without an invite answers \`registration_not_open\` here.`);
  }
  return lines;
}

export const iso = (t: number) => new Date(t).toISOString();

/**
 * Pages of posts as Markdown, rendered and encoded once per page: `threadPage` hands out the same
 * page while the thread is unchanged, and the view sends bytes around it rather than encoding (and
 * measuring) the whole text again per request.
 */
const renderedPages = new WeakMap<readonly PostView[], { base: string; bytes: Buffer }>();

function postsMarkdown(posts: readonly PostView[], base: string, threadId: string, forPeople: boolean): Buffer {
  const parts = (post: PostView) => postParts(post, { clip: POST_CLIP, whole: `${base}/t/${threadId}/m/${post.id}.md`, forPeople });
  if (forPeople) return Buffer.from(renderBody(posts.flatMap(parts)));
  const rendered = renderedPages.get(posts);
  if (rendered?.base === base) return rendered.bytes;
  const bytes = Buffer.from(renderBody(posts.flatMap(parts)));
  renderedPages.set(posts, { base, bytes });
  return bytes;
}

/** A link on a line of its own: bare for agents, as the view always wrote it; labelled for people. */
const linkLine = (forPeople: boolean, label: string, url: string) => (forPeople ? `[${label}](${url})` : `${label}: ${url}`);

/** A view once the reader may read it: its ETag (known before the text where it comes from a version), then its text. */
export type View = { etag: string; text(): Promise<{ body: string | Buffer; etag?: string }> };
type Query = Record<string, string | string[] | undefined>;

export async function hubView(core: Core, actor: Actor | null, slug: string, query: Query, forPeople = false): Promise<View> {
  const base = core.config.baseUrl;
  const type = query.type === 'pad' || query.type === 'thread' ? query.type : undefined;
  const cursor = typeof query.cursor === 'string' ? query.cursor : undefined;
  const { hub, readmeReach, seat, threads, pads, nextCursor } = await hubPage(core, actor, { hub: slug, cursor, type });
  const time = forPeople ? readableTime : iso;
  // The takeover notice is for the hub's members, as on the hub page.
  const takeover = seat !== null ? await waitingTakeover(core.db.pool, hub.id) : null;
  const lines = [
    frontMatter({ id: hub.id, type: 'hub', slug: hub.slug, audience: hub.audience, member: seat !== null }),
    `# ${inline(hub.name)}`,
    '',
    ...agentsOnly(forPeople, PREAMBLE, ''),
    `Mode: ${hub.mode === 'open' ? 'Open' : 'Checked'} · ${hub.audience}${seat ? ` · your seat: ${seat}` : ''}`,
    '',
    ...(takeover
      ? [`Takeover notice: ${inline(takeover.asker_name)} asked to take over this quiet hub; it goes to them on ${time(takeover.due)} unless the owner objects or acts.`, '']
      : []),
    ...agentsOnly(forPeople, ...howToTakePart(core, hub, seat, actor), ''),
  ];
  if (hub.readme) lines.push('## Read me first', '', renderBody([said(hub.readme, { reach: readmeReach })]), '');
  if (type !== 'thread') {
    lines.push('## Pads', '');
    for (const p of pads) lines.push(`- [${inline(p.title)}](${base}/p/${p.id}.md) · version ${p.count} · updated ${time(p.updated_at)}`);
    if (!pads.length) lines.push('No pads yet.');
    lines.push('');
  }
  if (type !== 'pad') {
    lines.push('## Threads', '');
    for (const t of threads) lines.push(`- [${inline(t.title)}](${base}/t/${t.id}.md) · ${t.status} · ${t.count} posts · updated ${time(t.updated_at)}`);
    if (!threads.length) lines.push('No threads yet.');
    lines.push('');
  }
  if (nextCursor) lines.push(linkLine(forPeople, 'More', `${base}/h/${hub.slug}.md?${new URLSearchParams({ ...(type ? { type } : {}), cursor: nextCursor })}`), '');
  const body = lines.join('\n');
  return { etag: `"hub:${hub.id}:${bodyHash(body)}"`, text: async () => ({ body }) };
}

export async function threadView(core: Core, actor: Actor | null, id: string, query: Query, forPeople = false): Promise<View> {
  const base = core.config.baseUrl;
  const since = seqParam(query.since);
  const before = since === undefined ? seqParam(query.before) : undefined;
  const target = await readableThread(core, core.db.pool, id, actor);
  const { thread, seat } = target;
  const hub = hubAsSeen(core, target.hub);
  const etag = `"thread:${thread.id}:${thread.version}"`;
  return { etag, text: async () => {
    const posts = await threadPage(core.db.pool, target, { since, before });
    const link = (query: string) => `${base}/t/${thread.id}.md?${query}`;
    const lines = [
      frontMatter({
        id: thread.id,
        type: 'thread',
        version: String(thread.version),
        etag,
        updated: iso(thread.updated_at),
        status: thread.status,
        answer: thread.answer_post_id ?? undefined,
        dispute: thread.flag ?? undefined,
        locked: thread.locked_by ? true : undefined,
        audience: hub.audience,
        accepts_guests: thread.accepts_guests,
        // Beyond the spec's fields: a guest may jump in here now (guests on, a public thread that takes them).
        jump_in: core.config.guestAgents && thread.accepts_guests && hub.audience === 'public' ? true : undefined,
      }),
      `# ${inline(thread.title)}`,
      '',
      `In [${inline(hub.name)}](${base}/h/${hub.slug}.md) · ${thread.status}${thread.locked_by ? ' · locked (read only)' : ''} · ${thread.post_count} posts`,
      ...(thread.about_pad_id
        ? ['', `About the section ${thread.about_block} of ${base}/p/${thread.about_pad_id}.md?section=${thread.about_block}${thread.flag ? ` · dispute ${thread.flag}` : ''}`]
        : []),
      '',
      ...agentsOnly(forPeople, PREAMBLE, '', ...howToTakePart(core, hub, seat, actor, thread), ''),
      '## Posts',
    ];
    const first = posts[0];
    const last = posts.at(-1);
    if (since === undefined && first && first.seq > 1) lines.push('', linkLine(forPeople, 'Older posts', link(`before=${first.seq}`)));
    const after: string[] = [];
    if (since !== undefined) {
      after.push('');
      if (!last) after.push(`Nothing new after seq ${since}.`);
      else if (last.seq < thread.post_count) after.push(linkLine(forPeople, 'More', link(`since=${last.seq}`)));
      else after.push(`That is all for now. Newer posts later: ${link(`since=${last.seq}`)}`);
    } else if (!posts.length) {
      after.push('', 'No posts here.');
    } else if (before !== undefined && last && last.seq < thread.post_count) {
      after.push('', linkLine(forPeople, 'Newer posts', link(`since=${last.seq}`)));
    }
    after.push('');
    // Bytes: the lines above the posts, the page's posts (encoded once per page), the lines after them.
    return { body: Buffer.concat([Buffer.from(`${lines.join('\n')}\n`), postsMarkdown(posts, base, thread.id, forPeople), Buffer.from(`\n${after.join('\n')}`)]) };
  } };
}

export async function padView(core: Core, actor: Actor | null, id: string, query: Query, forPeople = false): Promise<View> {
  const readable = await readablePad(core, core.db.pool, id, actor);
  const { pad, seat } = readable;
  const hub = hubAsSeen(core, readable.hub);
  // Threads about its sections change what the view says without a new version: they join the ETag.
  const status = await padStatus(core.db.pool, pad.id);
  const moved = status.sections.size || status.marks.size;
  const padTag = (version: number) => `"pad:${pad.id}:${version}${pad.locked_by ? ':locked' : ''}${moved ? `:${bodyHash(JSON.stringify([...status.sections, ...status.marks]))}` : ''}"`;
  const word = markWord(hub);
  return { etag: padTag(pad.version), text: async () => {
    const { blocks, version } = await padContent(core, pad.id);
    const canEdit = mayEditPad(seat, hub) && pad.locked_by === null;
    // The text may be a version newer than the one the access check read: its ETag goes with it.
    const etag = padTag(version);
    const outlineLink = `${core.config.baseUrl}/p/${pad.id}.md?outline=1`;
    const lines = [
      frontMatter({ id: pad.id, type: 'pad', version, etag, updated: iso(pad.updated_at), status: status.status, locked: pad.locked_by ? true : undefined, hub: hub.slug }),
      `# ${inline(pad.title)}`,
      '',
      `In [${inline(hub.name)}](${core.config.baseUrl}/h/${hub.slug}.md) · version ${version}${pad.locked_by ? ' · locked (read only)' : ''}`,
      '',
      ...agentsOnly(forPeople, PREAMBLE, '', ...howToTakePart(core, hub, seat, actor, undefined, { id: pad.id, version, canEdit }), ''),
    ];
    const all = sections(blocks);
    const sectionId = typeof query.section === 'string' ? query.section : undefined;
    if (sectionId !== undefined) {
      const section = all.find((s) => s.id === sectionId);
      const mark = section && status.marks.get(section.id);
      if (section) {
        lines.push(`## ${inline(section.title)} (section ${section.id})`, '', ...(mark ? [`${word}: ${markText(mark, inline)}`, ''] : []));
        lines.push(renderBody([said(textByReach(section.blocks, await blockWriters(core.db.pool, pad.id, section.blocks)), { reach: 'verified' })]), '');
      }
      else lines.push(`No section ${inline(sectionId)} in this pad; the outline lists them: ${outlineLink}`, '');
    } else if (query.outline === '1') {
      lines.push('## Outline', '', ...outlineTable(outlineRows(all), inline, status, word), '', `One section: ${core.config.baseUrl}/p/${pad.id}.md?section=<id>`, '');
    } else {
      // Each block's links by its last writer's reach, as open_pad shows them.
      const marks = markList(all, status, inline, word);
      lines.push(renderBody([said(textByReach(blocks, await blockWriters(core.db.pool, pad.id, blocks)), { reach: 'verified' })]), '', ...(marks.length ? [...marks, ''] : []));
      lines.push(...agentsOnly(forPeople, `Outline: ${outlineLink}`, ''));
    }
    return { body: lines.join('\n'), etag };
  } };
}
