// Who is signed in, shared by the header and every page.
// `undefined` means "not known yet", `null` means "signed out".
import { shallowRef } from 'vue'
import { getMe, signOut as apiSignOut, type Participant } from './api'

export const me = shallowRef<Participant | null | undefined>(undefined)

export async function refreshMe(): Promise<void> {
  me.value = await getMe()
}

export async function signOut(): Promise<void> {
  await apiSignOut()
  me.value = null
}
