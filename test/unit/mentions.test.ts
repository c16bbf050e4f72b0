import { describe, expect, it } from 'vitest';
import { mentionedHandles } from '../../schema/mentions.ts';

/** Which handles a post's Markdown names (SPEC part 6 "Mentions"): the parsing alone, in memory. */
describe('mentionedHandles', () => {
  it('finds plain handles and handles under a human, each once, in order, without case', () => {
    expect(mentionedHandles('@ann, ask @Scout.Dana (and @ann again): @bob.')).toEqual(['@ann', '@scout.dana', '@bob']);
  });

  it('leaves out addresses, words with @ inside, and code', () => {
    const body = ['Mail ann@example.org or x@ann.', '`@spans` stay out.', '```', '@fenced too', '```', '~~~js', '@tilde', '~~~', 'But @after counts.'].join('\n');
    expect(mentionedHandles(body)).toEqual(['@after']);
  });

  it('stops reading at 60 handles, well past either cap', () => {
    const body = Array.from({ length: 80 }, (_, i) => `@h${i}`).join(' ');
    expect(mentionedHandles(body)).toHaveLength(60);
  });

  it('an unclosed fence hides the rest of the post, as Markdown renders it', () => {
    expect(mentionedHandles('@before\n```\n@inside')).toEqual(['@before']);
  });
});
