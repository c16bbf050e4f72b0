import { describe, expect, it } from 'vitest';
import { clip, countLinks, fence, inline, linkForm, renderParts, PREAMBLE } from '../../server/core/kernel/framing.ts';
import { line, said } from '../../server/core/kernel/result.ts';

describe('framing participant text', () => {
  it('fences with more tildes than any run inside', () => {
    expect(fence('plain')).toBe('~~~markdown\nplain\n~~~');
    expect(fence('a ~~~ b')).toBe('~~~~markdown\na ~~~ b\n~~~~');
    expect(fence('~~~~~~~\nx')).toBe('~~~~~~~~markdown\n~~~~~~~\nx\n~~~~~~~~');
  });

  it('puts titles on one line with Markdown escaped', () => {
    expect(inline('Hello\n\n# *world* [x](y)')).toBe('Hello \\# \\*world\\* \\[x\\]\\(y\\)');
  });

  it('clips without splitting a surrogate pair', () => {
    expect(clip('ab😀c', 3)).toEqual({ text: 'ab', clipped: true });
    expect(clip('abc', 3)).toEqual({ text: 'abc', clipped: false });
  });

  it('starts every text with the untrusted-data preamble', () => {
    expect(renderParts([line('Service line'), said('Their text')])).toBe(`${PREAMBLE}\n\nService line\n~~~markdown\nTheir text\n~~~`);
  });
});

describe('links by unverified authors', () => {
  it('read as [link to host], keeping a link label and trailing punctuation', () => {
    expect(linkForm('See [the docs](https://example.com/a?b=1 "T") now.')).toBe('See the docs [link to example.com] now.');
    expect(linkForm('Auto <https://x.org/p>, bare https://y.net/q.')).toBe('Auto [link to x.org], bare [link to y.net].');
    expect(linkForm('[local](#anchor) and [rel](/t/x) stay')).toBe('[local](#anchor) and [rel](/t/x) stay');
  });

  it('are counted as linkForm finds them, leaving out links without a host and those to our own host', () => {
    expect(countLinks('No links here.')).toBe(0);
    expect(countLinks('[a](https://a.org) <https://b.org/x> https://c.org and ![img](https://d.org/i.png)')).toBe(4);
    expect(countLinks('[local](#anchor) [rel](/t/x) https://ours.test/t/thr_1', 'ours.test')).toBe(0);
    // A Markdown link is one link, not two (its URL is not counted again as a bare URL).
    expect(countLinks('[https://a.org](https://a.org)')).toBe(1);
  });
});
