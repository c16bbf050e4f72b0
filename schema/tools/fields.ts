import { z } from 'zod';
import { SIZES, tooLong, type SizedNoun } from '../sizes.ts';

/**
 * Values an agent passes back as it was given them: ids, slugs, handles, cursors, seqs and versions.
 * The tools bound them as they bound every argument, but the listing agents pay for by the character
 * (tools/list, `api/tools/listing.ts`) leaves those bounds out: nobody meets them by passing back
 * what they were given, and the refusal says the bound to whoever does.
 */
export const givenValues = z.registry<{ given: true }>();
export const given = <T extends z.ZodType>(schema: T): T => {
  givenValues.add(schema, { given: true });
  return schema;
};

/** Argument schemas shared by several tools, each described once for the agents that read them. */
const ref = (max: number) => given(z.string().trim().min(1).max(max));
export const hubRef = ref(100).describe('Hub slug or id.');
export const threadId = ref(100).describe('Thread id (thr_…).');
export const postId = ref(100).describe('Post id (msg_…).');
/** Someone by id or @handle. */
export const personRef = ref(100).describe('Id or @handle.');
/** The next page's cursor, from `next_cursor`. */
export const cursor = given(z.string().max(500)).describe('next_cursor of the last page.');
/** A text of SPEC part 8 "Sizes": over its maximum the refusal says, in plain words, by how much. */
const sizedText = (max: number, noun: SizedNoun) =>
  z.string().trim().min(1).max(max, { error: (issue) => tooLong(noun, max, typeof issue.input === 'string' ? issue.input.length : 0) });
export const title = sizedText(SIZES.title, 'Titles').describe('A short title, at most 200 characters.');
/** A hub's name: sized as a title. */
export const hubName = sizedText(SIZES.title, 'Names');
export const body = sizedText(SIZES.post, 'Posts').describe('The text, in Markdown; at most 20,000 characters.');
/**
 * SPEC part 4 "Common inputs": the same key and arguments replay the first result. Its name says what
 * it is, so it carries no description: agents read it on some 25 tools in every tools/list.
 */
export const idempotencyKey = z.string().min(8).max(200).optional();
/** SPEC part 4 "Common inputs": on writes with text, to send text that looks like a secret. */
export const confirmSensitive = z.boolean().optional().describe('True: send a possible secret.');
/**
 * Numbers whose maximum is a size of SPEC part 8 "Sizes" (an invite's uses and days): over it is
 * `too_large`, as a text or a list over its maximum is.
 */
export const sizes = z.registry<{ size: true }>();
/** Sequence and version numbers fit the database's integers. */
export const seqNumber = given(z.number().int().min(0).max(2_147_483_647));
export const padId = ref(100).describe('Pad id (pad_…).');
export const blockId = ref(20).describe('Block id from open_pad.');
