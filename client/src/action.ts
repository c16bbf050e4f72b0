// One async action behind a button or a form: whether it is under way, and what went wrong last time.
import { ref } from 'vue'
import { toApiError, type ApiError } from './api'

/**
 * `busy` is true while `run` awaits its work; `error` holds the last failure, as an ApiError for
 * ErrorNote. `run` clears the error first and never throws: it answers what the work answered, or
 * undefined once the failure is in `error`.
 */
export function useAction(initiallyBusy = false) {
  const busy = ref(initiallyBusy)
  const error = ref<ApiError | null>(null)

  async function run<T>(work: () => Promise<T>): Promise<T | undefined> {
    busy.value = true
    error.value = null
    try {
      return await work()
    } catch (err) {
      error.value = toApiError(err)
      return undefined
    } finally {
      busy.value = false
    }
  }

  return { busy, error, run }
}
