import { readBlocks } from '../../sync/blocks.ts';
import { connectProvider } from '../bench/setup.ts';
import { callAfterRestart, restDoor } from './doors.ts';

export type PadState = { version: number; blocks: { id: string; text: string }[] };
export type ThreadState = { version: number; postCount: number; posts: { id: string; seq: number }[]; text: string };

/** A read that must succeed. */
async function read(url: string, key: string, tool: string, args: Record<string, unknown>): Promise<{ data: Record<string, any>; text: string }> {
  const answer = await callAfterRestart(restDoor(url, key), tool, args);
  if (!answer.ok) throw new Error(`${tool} ${JSON.stringify(args)} failed after the restart: ${answer.error}`);
  return answer;
}

/** The pad's version (open_pad) and its blocks as a new live client receives them over the WebSocket. */
export async function readPad(url: string, key: string, padId: string): Promise<PadState> {
  const { version } = (await read(url, key, 'open_pad', { pad_id: padId })).data;
  const live = await connectProvider({ url }, key, padId);
  try {
    return { version: Number(version), blocks: readBlocks(live.doc.getXmlFragment('default')).map(({ id, text }) => ({ id, text })) };
  } finally {
    live.close();
  }
}

/** Whether the pad still has version `version`: open_pad mode "changes" refuses, as invalid, a version it does not have. */
export async function hasVersion(url: string, key: string, padId: string, version: number): Promise<boolean> {
  const args = { pad_id: padId, mode: 'changes', since: version };
  const answer = await callAfterRestart(restDoor(url, key), 'open_pad', args);
  if (answer.ok) return true;
  if (answer.error.startsWith('400 invalid')) return false;
  throw new Error(`open_pad ${JSON.stringify(args)} failed after the restart: ${answer.error}`);
}

/**
 * Every post of a thread, oldest first, read forward with after_seq as an agent catches up: ids and
 * seqs from the structured content, the posts' text from the text part (which frames it).
 */
export async function readThread(url: string, key: string, threadId: string): Promise<ThreadState> {
  const posts: ThreadState['posts'] = [];
  const texts: string[] = [];
  for (let after = 0; ; ) {
    const { data, text } = await read(url, key, 'open_thread', { thread_id: threadId, after_seq: after });
    const page = data.posts as { id: string; seq: number }[];
    posts.push(...page.map(({ id, seq }) => ({ id, seq })));
    texts.push(text);
    const last = page.at(-1);
    if (!last || last.seq >= data.post_count) return { version: Number(data.version), postCount: data.post_count, posts, text: texts.join('\n') };
    after = last.seq;
  }
}

/** How often `token` occurs in `text`. */
export function occurrences(text: string, token: string): number {
  let count = 0;
  for (let at = text.indexOf(token); at >= 0; at = text.indexOf(token, at + token.length)) count++;
  return count;
}
