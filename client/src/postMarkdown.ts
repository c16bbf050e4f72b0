// Posts as HTML: Markdown with raw HTML off, links by the author's reach (SPEC part 4 "Escaping").
import MarkdownIt from 'markdown-it'
import type Token from 'markdown-it/lib/token.mjs'
import type StateCore from 'markdown-it/lib/rules_core/state_core.mjs'
import { MENTION } from '../../schema/mentions.ts'

/** What one rendering needs to know: whether the author reads verified, and which origin is ours. */
export type PostEnv = { reach: boolean; origin: string }

export const LINK_REL = 'noopener nofollow ugc'

// html: false escapes any tag a writer sends; breaks: true keeps a chat post's single line breaks.
const md = new MarkdownIt('default', { html: false, breaks: true, linkify: true, typographer: false })
// Only links written with a scheme: "see example.com" stays text rather than becoming a guessed link.
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false })

function text(state: StateCore, content: string): Token {
  const token = new state.Token('text', '', 0)
  token.content = content
  return token
}

/**
 * Images never load from elsewhere (a picture from another site tells it who reads the thread): an
 * image becomes a link labelled with its alt text, which then follows the link rules below.
 */
function imageAsLink(state: StateCore, image: Token): Token[] {
  const open = new state.Token('link_open', 'a', 1)
  open.attrs = [['href', image.attrGet('src') ?? '']]
  const close = new state.Token('link_close', 'a', -1)
  return [open, text(state, `image: ${image.content || 'no description'}`), close]
}

function resolve(href: string, origin: string): URL | null {
  try {
    return new URL(href, origin)
  } catch {
    return null
  }
}

/**
 * A link stays live when it points into this site or its author has reach; then it opens with
 * rel="noopener nofollow ugc" (and in a new tab when it leaves the site). Otherwise it reads as text:
 * a written link keeps its label followed by `[link to <host>]`, a bare or <autolink> only the marker.
 */
function linksByReach(children: Token[], state: StateCore, env: PostEnv): Token[] {
  const out: Token[] = []
  for (let i = 0; i < children.length; i++) {
    const token = children[i]!
    if (token.type === 'image') {
      children.splice(i, 1, ...imageAsLink(state, token))
      i--
      continue
    }
    if (token.type !== 'link_open') {
      out.push(token)
      continue
    }
    const url = resolve(token.attrGet('href') ?? '', env.origin)
    const ours = url?.origin === env.origin
    if (url && (ours || env.reach)) {
      token.attrSet('rel', LINK_REL)
      if (!ours) token.attrSet('target', '_blank')
      out.push(token)
      continue
    }
    let end = i + 1
    while (end < children.length && children[end]!.type !== 'link_close') end++
    const label = children.slice(i + 1, end)
    const bare = token.info === 'auto'
    if (!bare) out.push(...label)
    if (url?.host) out.push(text(state, `${bare ? '' : ' '}[link to ${url.host}]`))
    else if (bare) out.push(...label)
    i = end
  }
  return out
}

md.core.ruler.push('links_by_reach', (state) => {
  const env = state.env as PostEnv
  for (const token of state.tokens) {
    if (token.type === 'inline' && token.children) token.children = linksByReach(token.children, state, env)
  }
})

/** Where a mention leads: a message to the person it names (the DM page starts one with them). */
export const mentionHref = (handle: string) => `/dm?with=${encodeURIComponent(handle)}`

/**
 * `@handle` in the text (not inside a link or code) becomes a link to the person, read as the server
 * reads mentions (schema/mentions.ts). It points into this site, so the reach rule leaves it live.
 */
function mentionLinks(children: Token[], state: StateCore): Token[] {
  const out: Token[] = []
  let inLink = 0
  for (const token of children) {
    if (token.type === 'link_open') inLink++
    if (token.type === 'link_close') inLink--
    if (token.type !== 'text' || inLink > 0) {
      out.push(token)
      continue
    }
    let last = 0
    for (const match of token.content.matchAll(MENTION)) {
      const handle = match[0]
      if (match.index > last) out.push(text(state, token.content.slice(last, match.index)))
      const open = new state.Token('link_open', 'a', 1)
      open.attrs = [['href', mentionHref(handle.toLowerCase())], ['class', 'mention']]
      out.push(open, text(state, handle), new state.Token('link_close', 'a', -1))
      last = match.index + handle.length
    }
    if (last === 0) out.push(token)
    else if (last < token.content.length) out.push(text(state, token.content.slice(last)))
  }
  return out
}

md.core.ruler.push('mentions', (state) => {
  for (const token of state.tokens) {
    if (token.type === 'inline' && token.children) token.children = mentionLinks(token.children, state)
  }
})

// A post's headings sit under the page's h1 (the thread) and h2 (its parts), so they start at h3.
md.renderer.rules.heading_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx]!
  token.tag = `h${Math.min(6, Number(token.tag.slice(1)) + 2)}`
  return self.renderToken(tokens, idx, options)
}
md.renderer.rules.heading_close = md.renderer.rules.heading_open

/**
 * The post's Markdown as safe HTML for v-html: no tag of the writer's survives, no image loads.
 * `inline`: one line's worth (a link, a title) with no paragraph around it, for use within a sentence.
 */
export function renderPost(body: string, env: PostEnv, inline = false): string {
  return inline ? md.renderInline(body, env) : md.render(body, env)
}
