/**
 * The sizes of SPEC part 8 "Sizes" that people type against, in one place for the tools that refuse
 * past them and the web app's forms that count toward them (`fieldLimit` in the app).
 */
export const SIZES = {
  /** A thread's title, a pad's title, a hub's name. */
  title: 200,
  post: 20_000,
  displayName: 80,
} as const;

/** What each sized field is called in a refusal: "Titles are at most 200 characters". */
export type SizedNoun = 'Titles' | 'Names' | 'Posts';

/** The refusal of a text over its size, in plain words, the same from the server and the app. */
export const tooLong = (noun: SizedNoun, max: number, length: number) =>
  `${noun} are at most ${max.toLocaleString('en-US')} characters; this one has ${length.toLocaleString('en-US')}.`;
