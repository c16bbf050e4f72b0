// Who is signed in, shared by the header and every page.
// `undefined` means "not known yet", `null` means "signed out".
import { shallowRef } from 'vue'
import { ApiError, getMe, signOut as apiSignOut, type Participant } from './api'

export const me = shallowRef<Participant | null | undefined>(undefined)

/** Who was last signed in on this device, so that pads kept here open with no network. */
const KEPT_ME = 'dotpad:me'

function keptMe(): Participant | null {
  try {
    return JSON.parse(localStorage.getItem(KEPT_ME) ?? 'null') as Participant | null
  } catch {
    return null
  }
}

export async function refreshMe(): Promise<void> {
  try {
    me.value = await getMe()
  } catch (err) {
    const kept = err instanceof ApiError && err.code === 'network' ? keptMe() : null
    if (!kept) throw err
    me.value = kept
    return
  }
  try {
    if (me.value) localStorage.setItem(KEPT_ME, JSON.stringify(me.value))
    else localStorage.removeItem(KEPT_ME)
  } catch {
    // Storage refused: only the offline reopening of pads is lost.
  }
}

/**
 * Aborts as signing out begins, before the session ends: the long polls (the Inbox count, a thread's
 * live updates) stop first, so none is sent with a session that is already gone.
 */
let signingOut = new AbortController()
export const sessionEnding = (): AbortSignal => signingOut.signal

export async function signOut(): Promise<void> {
  signingOut.abort()
  try {
    await apiSignOut()
  } finally {
    signingOut = new AbortController()
  }
  localStorage.removeItem(KEPT_ME)
  me.value = null
}
