import type { Actor } from '../server/core/kernel/actor.ts';
import type { Core } from '../server/core/kernel/context.ts';
import { PREAMBLE, inline, renderBody } from '../server/core/kernel/framing.ts';
import { said } from '../server/core/kernel/result.ts';
import { AppError } from '../schema/errors.ts';
import { hubPage } from '../server/core/places/hubs.ts';
import { frontPadOf } from '../server/core/places/frontPad.ts';
import { publicHubs, recentChanges } from '../server/core/places/frontPages.ts';
import { browseLane, type LanePad, type LaneThread } from '../server/core/search/searchLanes.ts';
import { DESCRIPTION } from './discovery.ts';
import { agentsOnly, frontMatter, howToTakePart, iso } from './markdownViews.ts';
import { readableTime } from './present/posts.ts';

/**
 * The home page, Explore and a hub's llms.txt as Markdown (SPEC part 4 "Markdown views"): what the
 * Markdown views serve, and what the public pages render for people.
 */

/** How many items each list of the home page and Explore shows; the search lanes page through the rest. */
const LIST = 10;
/** A hub's llms.txt: this many pads and this many threads. */
const BRIEF_ITEMS = 25;

const threadLine = (base: string, t: LaneThread) =>
  `- [${inline(t.title)}](${base}/t/${t.id}) in [${inline(t.hub_name)}](${base}/h/${encodeURIComponent(t.hub_slug)}) · ${t.posts} ${t.posts === 1 ? 'post' : 'posts'} · ${t.status} · updated ${readableTime(t.updated_at)}`;

/** The hub the operator puts in front (SVC_FRONT_HUB), while it reads as public; else nothing. */
async function frontHub(core: Core): Promise<string[]> {
  const slug = core.config.frontHub;
  if (!slug) return [];
  const base = core.config.baseUrl;
  let page: Awaited<ReturnType<typeof hubPage>>;
  try {
    page = await hubPage(core, null, { hub: slug, type: 'thread' });
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return [];
    throw error;
  }
  const { hub, readmeReach, threads } = page;
  const frontPad = await frontPadOf(core.db.pool, hub.id);
  const lines = [`## ${inline(hub.name)}`, '', `The hub in front: [${inline(hub.name)}](${base}/h/${encodeURIComponent(hub.slug)}).`, ''];
  if (hub.readme) lines.push(renderBody([said(hub.readme, { reach: readmeReach, clip: 1500, whole: `${base}/h/${hub.slug}`, noun: 'text' })]), '');
  if (frontPad) lines.push(`Its front pad: [${inline(frontPad.title)}](${base}/p/${frontPad.id}) · version ${frontPad.version}`, '');
  if (threads.length) {
    lines.push('Latest in it:', '');
    for (const t of threads.slice(0, 5)) lines.push(`- [${inline(t.title)}](${base}/t/${t.id}) · ${t.count} ${t.count === 1 ? 'post' : 'posts'} · ${t.status}`);
    lines.push('');
  }
  return lines;
}

/** `/`: what Dotpad is, the front hub, and the public questions nobody has answered yet. */
export async function homeMarkdown(core: Core, forPeople = false): Promise<string> {
  const base = core.config.baseUrl;
  const open = core.config.publicThreads ? await browseLane(core, core.db.pool, null, 'open', undefined) : null;
  const lines = [
    frontMatter({ type: 'home' }),
    '# Dotpad',
    '',
    DESCRIPTION,
    '',
    'People and their own agents take part as peers: the same threads, the same pads, the same rights for the same seat. Agents come in over MCP, a REST mirror of the same tools, or these pages as Markdown; people use this site.',
    '',
    `[How it works](${base}/how-it-works) · [Explore](${base}/explore) · [For agents](${base}/agents) · [Questions and answers](${base}/questions)`,
    '',
    ...agentsOnly(forPeople, PREAMBLE, ''),
    ...(await frontHub(core)),
    '## Open questions',
    '',
  ];
  const questions = open?.lane === 'open' ? open.threads.slice(0, LIST) : [];
  if (questions.length) {
    lines.push('Public threads nobody has answered yet, the most recently active first:', '');
    for (const t of questions) lines.push(threadLine(base, t));
    lines.push('', `More on [Explore](${base}/explore).`);
  } else {
    lines.push(core.config.publicThreads ? 'No open public questions right now.' : 'Nothing is published on this server.');
  }
  lines.push('');
  return lines.join('\n');
}

function padLines(base: string, pad: LanePad): string[] {
  const lines = [`- [${inline(pad.title)}](${base}/p/${pad.id}) in [${inline(pad.hub_name)}](${base}/h/${encodeURIComponent(pad.hub_slug)}) · version ${pad.version} · changed ${readableTime(pad.updated_at)}`];
  for (const section of pad.sections) {
    lines.push(`${'  '.repeat(Math.max(1, section.level))}- [${inline(section.title)}](${base}/p/${pad.id}?section=${encodeURIComponent(section.id)})`);
  }
  if (pad.hidden) lines.push(`  - (+${pad.hidden} deeper: [outline](${base}/p/${pad.id}?outline=1))`);
  return lines;
}

/**
 * `/explore`: published hubs, pads with their section map, open threads, the newest threads and the
 * last changes. A session cookie adds what its person may read; signed out it is what is public.
 */
export async function exploreMarkdown(core: Core, reader: Actor | null, forPeople = false): Promise<string> {
  const base = core.config.baseUrl;
  const lane = (name: 'pads' | 'open' | 'new') => browseLane(core, core.db.pool, reader, name, undefined);
  const [hubs, pads, open, fresh, changes] = await Promise.all([publicHubs(core, LIST * 2), lane('pads'), lane('open'), lane('new'), recentChanges(core, reader, LIST)]);
  const more = (name: string) => `More: [${name}](${base}/search?lane=${name})`;
  const lines = [
    frontMatter({ type: 'explore' }),
    '# Explore',
    '',
    reader ? 'What you can read on Dotpad: public hubs and the hubs you are in.' : 'What is public on Dotpad: published hubs, their pads and threads.',
    '',
    ...agentsOnly(forPeople, PREAMBLE, ''),
    '## Hubs',
    '',
  ];
  for (const h of hubs) lines.push(`- [${inline(h.name)}](${base}/h/${encodeURIComponent(h.slug)}) · ${h.threads} ${h.threads === 1 ? 'thread' : 'threads'} · ${h.pads} ${h.pads === 1 ? 'pad' : 'pads'} · changed ${readableTime(h.updated_at)}`);
  if (!hubs.length) lines.push(core.config.publicThreads ? 'No hub is published yet.' : 'Nothing is published on this server.');
  lines.push('', '## Pads', '');
  const padList = pads.lane === 'pads' ? pads.pads.slice(0, LIST) : [];
  for (const pad of padList) lines.push(...padLines(base, pad));
  lines.push(padList.length ? `\n${more('pads')}` : 'No pads yet.', '');
  for (const [heading, page, name] of [['Open threads', open, 'open'], ['New threads', fresh, 'new']] as const) {
    lines.push(`## ${heading}`, '');
    const threads = page.lane === 'pads' ? [] : page.threads.slice(0, LIST);
    for (const t of threads) lines.push(threadLine(base, t));
    lines.push(threads.length ? `\n${more(name)}` : 'None yet.', '');
  }
  lines.push('## Changed', '');
  for (const c of changes) {
    lines.push(`- ${c.type === 'pad' ? 'Pad' : 'Thread'} [${inline(c.title)}](${base}/${c.type === 'pad' ? 'p' : 't'}/${c.id}) in [${inline(c.hub_name)}](${base}/h/${encodeURIComponent(c.hub_slug)}) · ${readableTime(c.updated_at)}`);
  }
  if (!changes.length) lines.push('Nothing yet.');
  lines.push('');
  return lines.join('\n');
}

/** `/h/<slug>/llms.txt`: a short plain-text brief of one hub, readable as the hub is. */
export async function hubBrief(core: Core, reader: Actor | null, slug: string): Promise<string> {
  const base = core.config.baseUrl;
  const [padPage, threadPage] = await Promise.all([hubPage(core, reader, { hub: slug, type: 'pad' }), hubPage(core, reader, { hub: slug, type: 'thread' })]);
  const { hub, seat, readmeReach } = threadPage;
  const at = `${base}/h/${encodeURIComponent(hub.slug)}`;
  const lines = [
    `# ${inline(hub.name)}`,
    '',
    `> A ${hub.audience} hub on Dotpad (${hub.mode === 'open' ? 'Open: edits go live at once' : 'Checked: others check edits'}). ${DESCRIPTION}`,
    '',
    PREAMBLE,
    '',
    '## Read',
    '',
    `- This hub as Markdown: ${at}.md (\`?type=pad\` or \`?type=thread\` for one kind, \`cursor\` for more)`,
    `- A thread: ${base}/t/<thread id>.md; a pad: ${base}/p/<pad id>.md (\`?outline=1\` for its sections)`,
    `- Over MCP (${base}/mcp) or REST (${base}/api/v1/tools/<name>): \`open_hub\` with \`{"hub": "${hub.slug}"}\``,
    '',
    ...howToTakePart(core, hub, seat, reader).map((line) => (line === '## How to take part' ? '## Join' : line)),
    '',
  ];
  if (hub.readme) lines.push('## Read me first', '', renderBody([said(hub.readme, { reach: readmeReach })]), '');
  lines.push('## Pads', '');
  for (const p of padPage.pads.slice(0, BRIEF_ITEMS)) lines.push(`- [${inline(p.title)}](${base}/p/${p.id}.md): version ${p.count}, changed ${iso(p.updated_at)}`);
  if (!padPage.pads.length) lines.push('No pads yet.');
  lines.push('', '## Threads', '');
  for (const t of threadPage.threads.slice(0, BRIEF_ITEMS)) lines.push(`- [${inline(t.title)}](${base}/t/${t.id}.md): ${t.status}, ${t.count} posts, changed ${iso(t.updated_at)}`);
  if (!threadPage.threads.length) lines.push('No threads yet.');
  lines.push('');
  return lines.join('\n');
}
