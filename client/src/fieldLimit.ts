// How a typed text stands against its size (SPEC part 8 "Sizes", schema/sizes.ts): a counter once it
// nears the limit, and past it the refusal in the same plain words the server would answer.
import { SIZES, tooLong, type SizedNoun } from '../../schema/sizes.ts'

export type FieldKind = 'title' | 'name' | 'displayName' | 'post'

const KINDS: Record<FieldKind, { max: number; noun: SizedNoun }> = {
  title: { max: SIZES.title, noun: 'Titles' },
  name: { max: SIZES.title, noun: 'Names' },
  displayName: { max: SIZES.displayName, noun: 'Names' },
  post: { max: SIZES.post, noun: 'Posts' },
}

/** The counter shows from this share of the limit on. */
const NEAR = 0.8

export type FieldLimit = { max: number; length: number; near: boolean; over: boolean; problem: string | null }

/** Counted as the server counts: after trimming the ends. */
export function fieldLimit(kind: FieldKind, text: string): FieldLimit {
  const { max, noun } = KINDS[kind]
  const length = text.trim().length
  const over = length > max
  return { max, length, near: length >= max * NEAR, over, problem: over ? tooLong(noun, max, length) : null }
}
