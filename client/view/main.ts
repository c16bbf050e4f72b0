import { App } from '@modelcontextprotocol/ext-apps'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { HomeView } from '../../schema/tools/home.ts'
import type { PadView } from '../../schema/tools/pads.ts'
import type { TaskView } from '../../schema/tools/tasks.ts'
import type { ThreadPostView, ThreadView } from '../../schema/tools/threads.ts'
import { callerNote } from '../../schema/callers.ts'

/**
 * The MCP Apps view: renders the card of a tool result from its `_meta["svc/view"]` (a thread, a
 * pad, a task or home), and acts on the person's clicks through the app-only `ui_*` tools, each call
 * spending the click token the last app-only result brought (`_meta["svc/viewToken"]`).
 */

type Meta = { 'svc/view'?: unknown; 'svc/viewToken'?: string; 'svc/approveOnWeb'?: string; 'svc/actOnWeb'?: string }

const root = document.getElementById('card')!
const app = new App({ name: 'dotpad-view', version: '1.0.0' }, {})
let token: string | undefined
let base = ''

const metaOf = (result: CallToolResult) => (result._meta ?? {}) as Meta

/** Builds an element: `el('p', {class: 'muted'}, 'text', child)`. Text is always set as text, never HTML. */
function el(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string | false | undefined)[]): HTMLElement {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value)
  for (const child of children) if (child !== false && child !== undefined) node.append(child)
  return node
}

function show(...children: Node[]) {
  root.replaceChildren(el('section', { class: 'card' }, ...children))
}

const webLink = (path: string, label = 'Open in Dotpad') => {
  const a = el('a', { href: base + path, target: '_blank', rel: 'noopener' }, label)
  a.addEventListener('click', (event) => {
    event.preventDefault()
    void app.openLink({ url: base + path })
  })
  return a
}

/** Calls one of the view's buttons with the click token; shows what the service said when it refuses. */
async function click(name: string, args: Record<string, unknown>, note: HTMLElement): Promise<CallToolResult | null> {
  note.className = 'note'
  note.textContent = 'Working…'
  const result = await app.callServerTool({ name, arguments: { ...args, ...(token ? { view_token: token } : {}) } })
  const meta = metaOf(result)
  if (meta['svc/viewToken']) token = meta['svc/viewToken']
  if (result.isError) {
    const text = result.content?.[0]?.type === 'text' ? result.content[0].text : 'Refused.'
    note.className = 'note error'
    note.replaceChildren(text, ' ')
    const web = meta['svc/approveOnWeb'] ?? meta['svc/actOnWeb']
    if (web) note.append(webLink(web.replace(base, ''), 'Do it on the web'))
    return null
  }
  note.textContent = 'Done.'
  return result
}

/** Reads again through a model tool the view may call (a card tool), and draws what it answers. */
async function refresh(name: string, args: Record<string, unknown>) {
  const result = await app.callServerTool({ name, arguments: args })
  render(metaOf(result)['svc/view'])
}

function postItem(post: ThreadPostView) {
  const note = callerNote(post.caller)
  return el(
    'li',
    {},
    el('div', { class: 'meta' }, el('strong', {}, post.author.name), post.author.kind === 'agent' ? ' (agent)' : '', note ? ` · ${note}` : '', ` · #${post.seq}`),
    el('div', { class: `post-body${post.is_answer ? ' answer' : ''}` }, post.deleted ? '(deleted)' : post.hidden ? '(hidden)' : post.body),
  )
}

function threadCard(view: ThreadView) {
  const { thread } = view
  const note = el('p', { class: 'note', role: 'status' })
  const body = el('textarea', { name: 'body', placeholder: 'Reply as yourself', 'aria-label': 'Reply' }) as HTMLTextAreaElement
  const send = el('button', { type: 'button' }, 'Reply') as HTMLButtonElement
  // No <form>: hosts sandbox the view, often without allow-forms, which blocks a submission outright.
  const form = el('div', { class: 'reply' }, body, send)
  send.addEventListener('click', async () => {
    if (!body.value.trim()) return
    send.disabled = true
    const done = await click('ui_post_reply', { thread_id: thread.id, body: body.value }, note)
    send.disabled = false
    if (done) await refresh('open_thread', { thread_id: thread.id })
  })
  show(
    el('h1', {}, thread.title),
    el('div', { class: 'meta' }, `${thread.hub.name} · ${thread.status} · ${view.posts.length} posts shown `, webLink(`/t/${thread.id}`)),
    el('ul', {}, ...view.posts.slice(-8).map(postItem)),
    view.seat ? form : el('p', { class: 'muted' }, 'You have no seat in this hub.'),
    note,
  )
}

function padCard(view: PadView) {
  const { pad } = view
  const sections = view.mode === 'outline' ? view.sections : []
  show(
    el('h1', {}, pad.title),
    el('div', { class: 'meta' }, `${pad.hub.name} · version ${pad.version} · ${pad.status} `, webLink(`/p/${pad.id}`)),
    sections.length
      ? el('ul', {}, ...sections.map((s) => el('li', {}, `${'  '.repeat(Math.max(0, s.level - 1))}${s.title}`, el('span', { class: 'badge' }, `${s.words} words`), s.mark ? el('span', { class: 'badge' }, s.mark) : '')))
      : el('p', { class: 'muted' }, 'Open the pad to read and edit it together.'),
  )
}

function taskItem(task: TaskView) {
  const note = el('p', { class: 'note', role: 'status' })
  const take = el('button', { class: 'quiet' }, 'Take it') as HTMLButtonElement
  take.addEventListener('click', async () => {
    take.disabled = true
    const done = await click('ui_take_task', { task_id: task.task_id }, note)
    const next = done ? metaOf(done)['svc/view'] : undefined
    if (next) render(next)
    else take.disabled = false
  })
  return el(
    'li',
    {},
    el('strong', {}, task.title),
    el('span', { class: 'badge' }, task.state),
    el('div', { class: 'meta' }, `${task.thread_title} · ${task.assignee ? `for ${task.assignee.name}` : 'open to anyone'}`),
    el('div', { class: 'row' }, task.state === 'open' ? take : false, webLink(`/t/${task.thread_id}`)),
    note,
  )
}

function tasksCard(tasks: readonly TaskView[], title: string) {
  show(el('h1', {}, title), tasks.length ? el('ul', {}, ...tasks.map(taskItem)) : el('p', { class: 'muted' }, 'No tasks.'))
}

function homeCard(view: HomeView) {
  const tasks = [...view.tasks.assigned, ...view.tasks.review, ...view.tasks.open].slice(0, 5)
  show(
    el('h1', {}, `${view.who.name}'s Dotpad`),
    el('div', { class: 'meta' }, view.unread_inbox ? `${view.unread_inbox} unread in your inbox · ` : '', webLink('/', 'Open Dotpad')),
    el(
      'ul',
      {},
      ...view.threads.slice(0, 8).map((t) =>
        el('li', {}, el('strong', {}, t.title), t.unread ? el('span', { class: 'badge' }, `${t.unread} new`) : '', el('div', { class: 'meta' }, `${t.hub_name} · ${t.status} · ${t.posts} posts`)),
      ),
      ...tasks.map(taskItem),
    ),
  )
}

/** Draws the card a view model is, by its shape. */
function render(view: unknown) {
  if (!view || typeof view !== 'object') return show(el('p', { class: 'muted' }, 'Nothing to show here.'))
  const v = view as Record<string, unknown>
  if ('thread' in v && 'posts' in v) return threadCard(view as ThreadView)
  if ('pad' in v && 'mode' in v) return padCard(view as PadView)
  if ('task' in v) return tasksCard([(view as { task: TaskView }).task], 'Task')
  if ('tasks' in v && Array.isArray(v.tasks)) return tasksCard(v.tasks as TaskView[], 'Tasks')
  if ('who' in v && 'threads' in v) return homeCard(view as HomeView)
  show(el('p', { class: 'muted' }, 'Nothing to show here.'))
}

app.ontoolresult = (result) => {
  const meta = metaOf(result as CallToolResult)
  if (meta['svc/viewToken']) token = meta['svc/viewToken']
  render(meta['svc/view'])
}

await app.connect()
// The service's address, for links to the web app: the host tells the view where the server is not, so it comes with the session.
const session = await app.callServerTool({ name: 'ui_view_session', arguments: {} })
token = metaOf(session)['svc/viewToken'] ?? token
const sessionData = session.structuredContent as { base_url?: string } | undefined
base = sessionData?.base_url ?? ''
