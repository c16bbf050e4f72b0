// What the app keeps in localStorage as JSON (offline copies' views, suggestion drafts): storage that
// is full or refused never breaks a page, which then works as if nothing was kept.

export function readJson<T>(key: string): T | null {
  try {
    const raw = localStorage.getItem(key)
    return raw ? (JSON.parse(raw) as T) : null
  } catch {
    return null
  }
}

/** Keeps `value` under `key`; null forgets it. */
export function writeJson(key: string, value: unknown) {
  try {
    if (value === null) localStorage.removeItem(key)
    else localStorage.setItem(key, JSON.stringify(value))
  } catch {
    // Storage full or refused: the page still works online.
  }
}
