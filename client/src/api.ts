// Thin wrapper over the Dotpad HTTP API. Every failure becomes an ApiError whose
// `message` is fit to show to the user, so pages never have to parse responses.

export type Id = string

export interface Participant {
  id: Id
  name: string
  handle: string
  kind: 'human' | 'agent'
  /** From /api/me: the address held, and whether the account counts as verified. */
  email?: string | null
  verified?: boolean
}

export type Role = 'owner' | 'helper' | 'member'
export type Seat = { role: Role } | null

export interface Issue {
  path: string | (string | number)[]
  message: string
}

export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly issues: Issue[]
  /** A limit's refusal (`rate_limited`, a cooldown, the daily allowance): when writing works again (ISO). */
  readonly retryAt: string | null

  constructor(status: number, code: string, message: string, issues: Issue[] = [], retryAt: string | null = null) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.code = code
    this.issues = issues
    this.retryAt = retryAt
  }

  get unauthenticated(): boolean {
    return this.status === 401
  }
}

/** Normalises anything thrown into an ApiError so templates can rely on its shape. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err
  const message = err instanceof Error ? err.message : String(err)
  return new ApiError(0, 'client_error', message)
}

async function request<T>(method: 'GET' | 'POST', url: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json', 'x-svc': '1' }
  if (body !== undefined) headers['Content-Type'] = 'application/json'

  let res: Response
  try {
    res = await fetch(url, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    })
  } catch {
    // fetch only rejects when the request never got an answer.
    throw new ApiError(0, 'network', 'Could not reach the server. Check your connection and try again.')
  }

  if (res.status === 204) return undefined as T

  let payload: any = null
  try {
    payload = await res.json()
  } catch {
    // A proxy or crash page may answer with HTML; fall through to a generic message.
  }

  if (!res.ok) {
    throw new ApiError(
      res.status,
      typeof payload?.error === 'string' ? payload.error : 'http_error',
      typeof payload?.message === 'string' && payload.message
        ? payload.message
        : `The server answered ${res.status} ${res.statusText}`.trim(),
      Array.isArray(payload?.issues) ? payload.issues : [],
      retryAtOf(payload),
    )
  }
  if (payload === null) throw new ApiError(res.status, 'bad_response', 'The server sent an answer the app could not read.')
  return payload as T
}

/** When a pace refusal says writing works again: a cooldown's end, else the time the limit frees one. */
function retryAtOf(payload: any): string | null {
  if (payload?.error !== 'rate_limited') return null
  if (typeof payload.cooldownUntil === 'string') return payload.cooldownUntil
  if (typeof payload.retry_at === 'string') return payload.retry_at
  const seconds = payload.retry_after_seconds
  return typeof seconds === 'number' ? new Date(Date.now() + seconds * 1000).toISOString() : null
}

/** What a counted write reports of the daily allowance (guests, agents nobody linked). */
export interface Allowance {
  used: number
  limit: number
  remaining: number
  per: string
  resets_at: string
}

/** The signed-in participant, or null when there is no session. */
export async function getMe(): Promise<Participant | null> {
  try {
    return (await request<{ participant: Participant }>('GET', '/api/me')).participant
  } catch (err) {
    if (err instanceof ApiError && err.unauthenticated) return null
    throw err
  }
}

export async function signIn(name: string, email: string): Promise<Participant> {
  return (await request<{ participant: Participant }>('POST', '/signin', { name, email })).participant
}

export async function signOut(): Promise<void> {
  await request<void>('POST', '/signout')
}

/** A settings operation (`POST /api/settings/:op`): the person's agents, keys, links and connections. */
export async function settingsOp<T = any>(op: string, body: Record<string, unknown> = {}): Promise<T> {
  return request<T>('POST', `/api/settings/${encodeURIComponent(op)}`, body)
}

// ---- Invites ---------------------------------------------------------------

export interface InvitePreview {
  title: string
  kind: 'hub' | 'thread' | 'pad'
  role: Role
  invitedBy: string
  /** Whether the page may offer joining as a guest. */
  guestJoin: boolean
}

/** What an invite is for; the token goes in the body, never in a URL. */
export const previewInvite = (token: string) => request<InvitePreview>('POST', '/api/invite-preview', { token })

/** Jumps into a public thread that takes guests under a name; signed out, the server sets a guest session. */
export const jumpIn = (thread: Id, name: string) => request<{ participant: Participant; path: string }>('POST', '/api/jump-in', { thread, name })

/** Joins by invite as a guest: the server sets a 30-day session cookie. */
export const joinInviteAsGuest = (token: string, name: string) =>
  request<{ participant: Participant; scopeId: Id; kind: InvitePreview['kind']; path: string }>('POST', '/api/invite/join-guest', { token, name })

export interface SignInOptions {
  code: boolean
  /** An OpenID provider is set up: /signin/start goes there. */
  oidc: boolean
  development_form: boolean
  delivery: 'smtp' | 'outbox'
  outbox_url?: string
}

export const signInOptions = () => request<SignInOptions>('GET', '/api/signin-options')

/** Mails a 6-digit code to the address; the answer is the same whether or not it has an account. */
export const sendSignInCode = (email: string) => request<{ message: string; delivery: 'smtp' | 'outbox' }>('POST', '/signin/code', { email })

export async function checkSignInCode(email: string, code: string): Promise<Participant> {
  return (await request<{ participant: Participant }>('POST', '/signin/code/verify', { email, code })).participant
}

export interface Verified {
  verified: boolean
  name: string
  signedIn: boolean
  merged: boolean
  otherSession: boolean
}

/** Settings: mails a link confirming the address (`/verify#svcv_…`, 24 hours). */
export const requestEmailLink = (email: string) => request<{ message: string }>('POST', '/api/settings/verify-email', { email })

export const verifyEmail = (token: string) => request<Verified>('POST', '/api/verify-email', { token })

// ---- Tools -----------------------------------------------------------------

export interface HubSummary {
  id: Id
  slug: string
  name: string
  role: Role
}

export type ThreadStatus = 'open' | 'answered'

export interface ThreadSummary {
  id: Id
  title: string
  status: ThreadStatus
  posts: number
  updated: string
}

export interface PadSummary {
  id: Id
  title: string
  version: number
  updated: string
}

export interface HubMember {
  id: Id
  name: string
  handle: string
  kind: 'human' | 'agent'
  role: Role
}

export interface JoinRequest {
  id: Id
  name: string
  handle: string
  kind: 'human' | 'agent'
  note: string
  asked: string
}

export interface HubView {
  hub: { id: Id; slug: string; name: string; readme?: string | null; mode: string; audience: string }
  seat: Seat
  threads: ThreadSummary[]
  pads: PadSummary[]
  next_cursor?: string | null
  /** For a reader with a seat, on the first page. */
  members?: HubMember[]
  member_count?: number
  /** For the owner and helpers: who waits to be let in. */
  requests?: JoinRequest[] | null
  request_count?: number
}

export type ModerateAction = 'let_in' | 'turn_away' | 'remove' | 'name_helper' | 'name_member'
export type PostModeration = 'hide' | 'unhide' | 'delete'

export interface AudienceChange {
  audience: 'public' | 'private'
  status: 'preview' | 'published' | 'made_private' | 'unchanged'
  threads: number
  posts: number
  pads: number
  members: number
}

export interface PadView {
  pad: { id: Id; title: string; version: number; hub: { slug: string; name: string } }
  seat: Seat
  /** Whether the reader may type in the pad; the live connection is read-only otherwise. */
  canEdit: boolean
  /** Mode "outline" (the default): the sections, in order. */
  sections?: OutlineSection[]
}

export type PadChange = { block_id: Id; change: 'added' | 'changed' | 'removed'; text: string; before?: string }

export interface PadChangesView extends PadView {
  since: number
  changes: PadChange[]
}

export type WriterKind = 'human' | 'agent'

export interface PadVersionEntry {
  version: number
  kind: 'create' | 'edit' | 'undo' | 'live'
  writer: { id: Id; name: string; kind: WriterKind } | null
  at: string
  blocks: number
  added: number
  removed: number
  snippet: string | null
  editId: string | null
  undoable: boolean
}

export interface PadHistoryView {
  version: number
  versions: PadVersionEntry[]
  nextBefore: number | null
  /** Each current block's last writer, by block id. */
  authors: Record<Id, { id: Id; name: string; kind: WriterKind }>
}

/** The five reactions; the web app draws them (ReactionIcon.vue), so no emoji font is needed. */
export const REACTIONS = [
  { key: 'thumbs_up', label: 'Thumbs up' },
  { key: 'heart', label: 'Heart' },
  { key: 'laugh', label: 'Laugh' },
  { key: 'eyes', label: 'Eyes' },
  { key: 'check', label: 'Check' },
] as const

export type Reaction = (typeof REACTIONS)[number]['key']

export interface Post {
  id: Id
  seq: number
  /** `reach`: the author reads verified, so their links are live. */
  author: { id: Id; name: string; kind: 'human' | 'agent'; reach?: boolean }
  /** Empty when hidden or deleted, for a reader who may not see it. */
  body: string
  created: string
  reply_to?: Id | null
  is_answer: boolean
  reactions: Partial<Record<Reaction, number>>
  /** The reactions the reader gave. */
  mine: Reaction[]
  hidden?: boolean
  deleted?: boolean
  clipped?: boolean
}

export interface Decision {
  id: Id
  pad_id: Id
  pad_title: string
  text: string
  by: { id: Id; name: string; kind: 'human' | 'agent' }
  at: string
}

export interface ThreadView {
  thread: {
    id: Id
    title: string
    status: ThreadStatus
    answer?: Id | null
    accepts_guests?: boolean
    hub: { slug: string; name: string }
    /** The pad section the thread is about. */
    about?: { pad_id: Id; pad_title: string; block_id: Id; section_title: string }
    flag?: 'open' | 'settled' | 'unresolved'
  }
  posts: Post[]
  members: { id: Id; name: string; kind: 'human' | 'agent'; role: Role }[]
  pads: { id: Id; title: string; version: number }[]
  tasks?: TaskView[]
  decisions?: Decision[]
  can?: { moderate: boolean; mark_answer: boolean }
  seat: Seat
}

/** catch_up's data, as far as the thread page reads it. */
export interface CatchUpData {
  /** Where the reader last read the thread; absent the first time. */
  last_read?: { seq: number; at: string }
  since: { new_posts: number; posts: { id: Id; seq: number }[]; tasks: unknown[]; decisions: unknown[] }
}

/** One row of open_pad's outline (view.sections; data.sections without the title). */
export interface OutlineSection {
  id: Id
  level: number
  words: number
  title: string
}

/** Argument and result shapes per tool, so each call site is checked end to end. */
export interface SearchHit {
  type: 'hub' | 'pad' | 'section' | 'thread' | 'task' | 'post'
  id: Id
  title: string
  hub_slug: string
  hub_name: string
  thread_id: Id | null
  /** A section's pad. */
  pad_id: Id | null
  /** A section's pad title, a task's thread title. */
  parent_title: string | null
  state: string
  snippet: string | null
  updated: string
}

export interface SearchView {
  groups: { type: SearchHit['type']; heading: string; hits: SearchHit[] }[]
  empty: string | null
  next_cursor?: string
}

export type TaskState = 'open' | 'assigned' | 'taken' | 'in_progress' | 'blocked' | 'in_review' | 'done' | 'cancelled'
type TaskPerson = Pick<Participant, 'id' | 'name' | 'handle' | 'kind'>
export interface TaskView {
  task_id: Id
  thread_id: Id
  thread_title: string
  hub_slug: string
  state: TaskState
  title: string
  created_by: TaskPerson
  assignee: TaskPerson | null
  reviewer: TaskPerson | null
  result?: { kind: 'pad' | 'section' | 'link'; pad_id?: Id; block_id?: string }
  result_url: string | null
  note: string | null
}

export type DmState = 'open' | 'request' | 'waiting' | 'declined' | 'closed' | 'blocked'
export interface DmSummary {
  id: Id
  with: Pick<Participant, 'id' | 'name' | 'handle' | 'kind'>
  state: DmState
  posts: number
  updated: string
}
export interface DmListView {
  dms: (DmSummary & { last: string | null })[]
  next_cursor: string | null
}
export interface DmReadingView {
  dm: DmSummary
  /** `author.reach`: the author reads verified, so their links are live. */
  messages: { id: Id; seq: number; author: Pick<Participant, 'id' | 'name' | 'handle' | 'kind'> & { reach: boolean }; body: string; created: string }[]
  older: number | null
}

/** show_dotpad's view: the signed-in person's home. */
export type HomeTaskLane = 'assigned' | 'held' | 'review' | 'open'
export interface HomeView {
  who: { id: Id; name: string; handle: string }
  unread_inbox: number | null
  threads: { id: Id; title: string; hub_slug: string; hub_name: string; status: string; posts: number; started: boolean; unread: number; updated: string }[]
  more_threads: boolean
  tasks: Record<HomeTaskLane, (TaskView & { hub_slug: string })[]>
  more_tasks: Partial<Record<HomeTaskLane, true>>
  hubs: HubSummary[]
}

export type InboxKind = 'mention' | 'reply' | 'assigned' | 'review' | 'added' | 'report' | 'dm' | 'cooldown'
/** One item of check_inbox's view: what it is about, from whom, and the words it quotes. */
export interface InboxItemView {
  id: Id
  kind: InboxKind
  at: string
  from: Pick<Participant, 'id' | 'name' | 'handle' | 'kind'>
  thread_id?: Id
  post_id?: Id
  task_id?: Id
  dm_id?: Id
  hub_id?: Id
  /** Notices folded into this item (past 20 an hour from one sender). */
  count?: number
  held_until?: string
  summary: string
  /** The post it quotes was hidden or deleted since: no summary. */
  withheld: 'hidden' | 'deleted' | null
  thread_title: string | null
  hub_slug: string | null
}
export interface InboxView {
  items: InboxItemView[]
  next_cursor: string
  /** Past every unacked item now: wait_for_changes with it wakes only for new ones. */
  newest_cursor: string
  more: boolean
  unread: number
}

interface Tools {
  show_dotpad: { args: Record<string, never>; data: unknown; view: HomeView }
  ui_my_hubs: { args: Record<string, never>; data: unknown; view: { hubs: HubSummary[] } }
  create_hub: { args: { name: string; slug?: string }; data: { hub_id: Id; slug: string }; view: unknown }
  open_hub: { args: { hub: string; cursor?: string }; data: unknown; view: HubView }
  join_hub: { args: { hub: string }; data: { hub_id: Id; status: 'joined' | 'requested' | 'member' }; view: unknown }
  start_thread: {
    args: { hub: string; title: string; body: string; pad_id?: Id; anchor_block?: Id; flag?: boolean }
    data: { thread_id: Id; post_id: Id }
    view: unknown
  }
  open_thread: { args: { thread_id: Id; before_seq?: number }; data: { version: string; before_seq?: number }; view: ThreadView }
  catch_up: { args: { thread_id: Id }; data: CatchUpData; view: unknown }
  wait_for_changes: {
    args: { thread_id: Id; version: string; timeout_seconds?: number } | { inbox: true; inbox_cursor?: string; timeout_seconds?: number }
    data: { version: string; changed: boolean; inbox?: boolean }
    view: unknown
  }
  report: { args: { post_id: Id; reason?: string }; data: unknown; view: unknown }
  create_task: { args: { thread_id: Id; title: string; assignee?: string; reviewer?: string }; data: { task_id: Id }; view: { task: TaskView } }
  post_reply: { args: { thread_id: Id; body: string; reply_to?: Id }; data: { post_id: Id; seq: number; allowance?: Allowance }; view: unknown }
  react: { args: { post_id: Id; reaction: Reaction; remove?: boolean }; data: { post_id: Id; reaction: Reaction; count: number; mine: boolean }; view: unknown }
  mark_answer: { args: { post_id: Id; unmark?: boolean }; data: { thread_id: Id; status: ThreadStatus; answer?: Id | null }; view: unknown }
  create_pad: {
    args: { hub: string; title: string; text?: string } | { thread_id: Id; title: string; text?: string }
    data: { pad_id: Id; version: number }
    view: unknown
  }
  open_pad: { args: { pad_id: Id; mode?: 'outline' }; data: { version: number; sections?: Omit<OutlineSection, 'title'>[] }; view: PadView }
  ui_pad_history: { args: { pad_id: Id; before?: number }; data: unknown; view: PadHistoryView }
  undo_edit: {
    args: { edit_id: string }
    data: { pad_id: Id; version: number; changed: Id[]; conflicts: { block_id: Id; reason: string }[]; undone: string }
    view: unknown
  }
  ui_thread_guests: { args: { thread_id: Id; accepts_guests: boolean }; data: { accepts_guests: boolean; open_to_guests: boolean }; view: unknown }
  moderate: {
    args: { hub: string; action: ModerateAction; who: Id } | { post_id: Id; action: PostModeration } | { thread_id: Id; action: 'settle' }
    data: { role?: Role; changed: boolean }
    view: unknown
  }
  set_hub_guide: { args: { hub: string; text: string }; data: { characters: number; changed: boolean }; view: unknown }
  set_hub_visibility: { args: { hub: string; audience: 'public' | 'private'; confirm?: boolean }; data: AudienceChange; view: unknown }
  list_tasks: { args: { in?: string; mine?: boolean; state?: TaskState; limit?: number; cursor?: string }; data: unknown; view: { tasks: TaskView[]; next_cursor: string | null } }
  take_task: { args: { task_id: Id }; data: unknown; view: { task: TaskView } }
  submit_result: { args: { task_id: Id; pad_id?: Id; url?: string }; data: unknown; view: { task: TaskView } }
  update_task: { args: { task_id: Id; action: 'start' | 'block' | 'unblock' | 'decline' | 'cancel' | 'approve' | 'send_back' }; data: unknown; view: { task: TaskView } }
  search_dotpad: { args: { q: string; cursor?: string }; data: { next_cursor?: string }; view: SearchView }
  start_dm: { args: { with: string; body: string }; data: { dm_id: Id; state: DmState }; view: unknown }
  list_dms: { args: { dm_id?: Id; cursor?: string; before_seq?: number }; data: unknown; view: DmListView | DmReadingView }
  respond_to_dm: { args: { dm_id: Id; action: 'accept' | 'decline' | 'block' | 'report' | 'unblock' }; data: { state: DmState }; view: unknown }
  check_inbox: {
    args: { cursor?: string; limit?: number; ack_up_to?: string; ack_items?: Id[] }
    data: { unread: number; next_cursor: string; newest_cursor: string; more: boolean; acked?: number }
    view: InboxView
  }
}

export type ToolName = keyof Tools

export interface ToolResult<N extends ToolName> {
  text: string
  data: Tools[N]['data']
  view: Tools[N]['view']
  api: string
}

/** `signal` ends the call early from this side, e.g. the long wait of a page that is gone. */
export async function callTool<N extends ToolName>(name: N, args: Tools[N]['args'], signal?: AbortSignal): Promise<ToolResult<N>> {
  const result = await request<ToolResult<N>>('POST', `/api/tools/${encodeURIComponent(name)}`, args, signal)
  // At the daily allowance the answer is 200 with nothing saved: the page shows it as the refusal it is.
  const data = result.data as { limit_reached?: boolean; allowance?: Allowance; sign_in_url?: string } | undefined
  if (data?.limit_reached && data.allowance) {
    const lift = data.sign_in_url ? ' Signing in lifts the limit.' : ''
    throw new ApiError(200, 'limit_reached', `Not saved: this account has ${data.allowance.limit} writes a day and they are used.${lift}`, [], data.allowance.resets_at)
  }
  return result
}

/** open_pad mode "changes": what changed since a version, paragraph by paragraph. */
export async function padChangesSince(padId: Id, since: number): Promise<PadChangesView> {
  return (await request<{ view: PadChangesView }>('POST', '/api/tools/open_pad', { pad_id: padId, mode: 'changes', since })).view
}

