import { describe, expect, it } from 'vitest';
import { pageFromMarkdown, renderPost } from '../../schema/postMarkdown.ts';

const origin = 'https://dotpad.example';
const unverified = (body: string) => renderPost(body, { reach: false, origin });
const verified = (body: string) => renderPost(body, { reach: true, origin });

describe('post Markdown in the web app', () => {
  it('renders emphasis and keeps single line breaks', () => {
    expect(unverified('**bold** and _soft_\nnext')).toBe('<p><strong>bold</strong> and <em>soft</em><br>\nnext</p>\n');
  });

  it('escapes raw HTML instead of passing it on', () => {
    const html = unverified('<img src=x onerror=alert(1)> <script>alert(2)</script>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script');
    expect(html).toContain('&lt;script&gt;');
  });

  it('shows an unverified author’s links as a marker naming the host, through the warning page', () => {
    const out = (url: string, host: string) => `<a href="/out?u=${encodeURIComponent(url)}" rel="noopener nofollow ugc" class="out-link">[link to ${host}]</a>`;
    expect(unverified('[the plan](https://evil.example/x) and https://bare.example/y')).toBe(
      `<p>the plan ${out('https://evil.example/x', 'evil.example')} and ${out('https://bare.example/y', 'bare.example')}</p>\n`,
    );
    expect(unverified('<https://auto.example/z>')).toBe(`<p>${out('https://auto.example/z', 'auto.example')}</p>\n`);
    expect(unverified('[protocol-relative](//other.example/a)')).toContain('[link to other.example]');
    expect(unverified('see example.com')).toBe('<p>see example.com</p>\n');
  });

  it('keeps links into this site live for anyone, and a verified author’s links live', () => {
    expect(unverified('[thread](/t/thr_1)')).toBe(`<p><a href="/t/thr_1" rel="noopener nofollow ugc">thread</a></p>\n`);
    expect(verified('[plan](https://docs.example/p)')).toBe(
      '<p><a href="https://docs.example/p" rel="noopener nofollow ugc" target="_blank">plan</a></p>\n',
    );
  });

  it('never turns script URLs into links', () => {
    expect(verified('[x](javascript:alert(1))')).not.toContain('<a');
  });

  it('loads no image: it becomes a link by the same rules', () => {
    expect(unverified('![a cat](https://img.example/cat.png)')).toContain('<p>image: a cat <a href="/out?u=https%3A%2F%2Fimg.example%2Fcat.png"');
    expect(verified('![a cat](https://img.example/cat.png)')).toBe(
      '<p><a href="https://img.example/cat.png" rel="noopener nofollow ugc" target="_blank">image: a cat</a></p>\n',
    );
  });

  it('renders a Markdown view as a page: participant text as Markdown, only links into the site live', () => {
    const view = [
      '---',
      'type: "thread"',
      'accepts_guests: true',
      '---',
      '# Plan https://evil.example/t',
      '',
      'In [Hub](https://dotpad.example/h/hub.md) · open',
      '',
      '## Posts',
      '',
      '~~~markdown',
      '# Said **loudly** [link to spam.example]',
      '~~~',
      '',
    ].join('\n');
    const page = pageFromMarkdown(view, origin);
    expect(page.front).toEqual({ type: 'thread', accepts_guests: true });
    expect(page.title).toBe('Plan https://evil.example/t');
    expect(page.html).toContain('<h1>Plan https://evil.example/t</h1>');
    expect(page.html).toContain('<a href="/h/hub">Hub</a>');
    expect(page.html).toContain('<div class="said"><h3>Said <strong>loudly</strong> [link to spam.example]</h3>');
    expect(page.description).toBe('In Hub · open Posts Said loudly [link to spam.example]');
  });

  it('puts a post’s headings under the page’s own', () => {
    expect(unverified('# Top\n\n###### Deep')).toBe('<h3>Top</h3>\n<h6>Deep</h6>\n');
  });
});
