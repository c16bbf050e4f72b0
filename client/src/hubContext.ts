// Which hub the page being read belongs to, for the side panel and the breadcrumbs: a hub page knows
// it from its address, a thread's or a pad's page once it has loaded (ItemHead tells it).
import { shallowRef } from 'vue'

export type HubRef = { slug: string; name: string }

/** The hub of the thread or pad page last loaded; kept while the next one loads, so the panel stays put. */
export const pageHub = shallowRef<HubRef | null>(null)
