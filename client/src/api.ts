// Thin wrapper over the Dotpad HTTP API. Every failure becomes an ApiError whose
// `message` is fit to show to the user, so pages never have to parse responses.
// The tools' arguments, data and views are typed from their contract in schema/tools: one source for
// the server that answers and the app that reads.
import type { ToolData, ToolInput, ToolName, ToolView } from '../../schema/tools/contract.ts'
import type { Role } from '../../schema/rows.ts'
import type { Allowance, Person } from '../../schema/tools/views.ts'

export type Id = string

/** The signed-in person; from /api/me also the address held, and whether the account counts as verified. */
export type Participant = Person & { email?: string | null; verified?: boolean }

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
  if (payload === null) throw unreadable(res.status)
  return payload as T
}

/** An answer the app could not read: no JSON, or not the shape its tool's contract declares. */
const unreadable = (status = 200) => new ApiError(status, 'bad_response', 'The server sent an answer the app could not read.')

/** When a pace refusal says writing works again: a cooldown's end, else the time the limit frees one. */
function retryAtOf(payload: any): string | null {
  if (payload?.error !== 'rate_limited') return null
  if (typeof payload.cooldownUntil === 'string') return payload.cooldownUntil
  if (typeof payload.retry_at === 'string') return payload.retry_at
  const seconds = payload.retry_after_seconds
  return typeof seconds === 'number' ? new Date(Date.now() + seconds * 1000).toISOString() : null
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

/** What every tool's answer may carry beside its own data: a counted write's allowance. */
type DataExtras = { allowance?: Allowance }

/** A tool's answer to the web app: the agents' text, the structured `data`, and the `view` the pages render. */
interface ToolResult<N extends ToolName> {
  text: string
  data: ToolData<N> & DataExtras
  view: ToolView<N>
  api: string
}

/** The daily allowance's refusal: HTTP 200, nothing saved, instead of the tool's data. */
type LimitReached = { limit_reached: true; allowance: Allowance; sign_in_url?: string }

const isLimitReached = (data: unknown): data is LimitReached =>
  typeof data === 'object' && data !== null && (data as Partial<LimitReached>).limit_reached === true

/**
 * Calls a tool through the web app's door (`POST /api/tools/:name`); the arguments and the answer are
 * typed by the tool's contract. `signal` ends the call early from this side, e.g. the long wait of a
 * page that is gone.
 */
export async function callTool<N extends ToolName>(name: N, args: ToolInput<N>, signal?: AbortSignal): Promise<ToolResult<N>> {
  const result = await request<ToolResult<N>>('POST', `/api/tools/${encodeURIComponent(name)}`, args, signal)
  // At the daily allowance the answer is 200 with nothing saved: the page shows it as the refusal it is.
  if (isLimitReached(result.data)) {
    const { allowance, sign_in_url } = result.data
    const lift = sign_in_url ? ' Signing in lifts the limit.' : ''
    throw new ApiError(200, 'limit_reached', `Not saved: this account has ${allowance.limit} writes a day and they are used.${lift}`, [], allowance.resets_at)
  }
  return result
}

// The views' parts that pages and components name, as the contract declares them.
export type HubView = ToolView<'open_hub'>
export type ThreadSummary = HubView['threads'][number]
export type PadSummary = HubView['pads'][number]
export type HubSummary = ToolView<'ui_my_hubs'>['hubs'][number]
export type ThreadView = ToolView<'open_thread'>
export type Post = ThreadView['posts'][number]
export type TaskView = ThreadView['tasks'][number]
export type CatchUpData = ToolData<'catch_up'>
export type PadView = ToolView<'open_pad'>
export type OutlineSection = Extract<PadView, { mode: 'outline' }>['sections'][number]
export type PadChangesView = Extract<PadView, { mode: 'changes' }>
export type PadHistoryView = ToolView<'ui_pad_history'>
export type WaitingSuggestion = ToolView<'ui_review_queue'>['suggestions'][number]
export type PadVersionEntry = PadHistoryView['versions'][number]
export type SearchView = ToolView<'search_dotpad'>
export type SearchHit = SearchView['groups'][number]['hits'][number]
export type HomeView = ToolView<'show_dotpad'>
export type HomeTaskLane = keyof HomeView['tasks']
export type InboxItemView = ToolView<'check_inbox'>['items'][number]
export type KeptInboxItem = ToolView<'ui_inbox'>['items'][number]
export type PlaceInvite = ToolView<'ui_invites'>['invites'][number]
export type DmListView = Extract<ToolView<'list_dms'>, { dms: unknown }>
export type DmReadingView = Extract<ToolView<'list_dms'>, { messages: unknown }>
export type AudienceChange = ToolData<'set_hub_visibility'>
export type ModerateAction = Extract<ToolInput<'moderate'>['action'], 'let_in' | 'turn_away' | 'remove' | 'name_helper' | 'name_member'>
export type PostModeration = Extract<ToolInput<'moderate'>['action'], 'hide' | 'unhide' | 'delete'>
export type Reaction = ToolInput<'react'>['reaction']

/** The five reactions, as the web app labels them; it draws them (ReactionIcon.vue), so no emoji font is needed. */
export const REACTIONS = [
  { key: 'thumbs_up', label: 'Thumbs up' },
  { key: 'heart', label: 'Heart' },
  { key: 'laugh', label: 'Laugh' },
  { key: 'eyes', label: 'Eyes' },
  { key: 'check', label: 'Check' },
] as const satisfies readonly { key: Reaction; label: string }[]

/** list_dms with dm_id: one DM's messages. */
export async function readDm(dmId: string): Promise<DmReadingView> {
  const { view } = await callTool('list_dms', { dm_id: dmId })
  if (!('messages' in view)) throw unreadable()
  return view
}

/** list_dms without dm_id: the person's DMs, newest first, a page from `cursor`. */
export async function listDms(cursor?: string | null): Promise<DmListView> {
  const { view } = await callTool('list_dms', cursor ? { cursor } : {})
  if (!('dms' in view)) throw unreadable()
  return view
}

/** open_pad mode "changes": what changed since a version, paragraph by paragraph. */
export async function padChangesSince(padId: string, since: number): Promise<PadChangesView> {
  const { view } = await callTool('open_pad', { pad_id: padId, mode: 'changes', since })
  if (view.mode !== 'changes') throw unreadable()
  return view
}
