/**
 * What the read benchmarks share: a public hub with a thread of 30 posts served by the real server
 * in its own process, and the baselines in theirs (the load and its rounds: sideBySide.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'slonik';
import { registerAgent, type Store } from '../support/server.ts';
import type { BaselineReady, BaselineRequest } from './baselines.ts';
import { manyAgents, seededServer } from './seeded.ts';
import { restOk, type ServerProcess } from './setup.ts';
import { prng } from './stats.ts';

export const THREAD_POSTS = 30;
/** Readers who also wrote posts of the thread, beside its owner. */
const POST_AUTHORS = 8;

/** The server with a public thread, and the keys of agents seated in its hub. */
export type ReadWorld = { server: ServerProcess; hubSlug: string; threadId: string; readerKeys: string[]; close(): Promise<void> };

const WORDS = 'we could keep the plan as it is but the second part needs a test first and someone should read the numbers again before Friday because they moved since last week'.split(' ');

/** A post of ordinary length (150 to 900 characters); every fifth has a link and a short list. */
function postBody(random: () => number, i: number): string {
  const length = 150 + Math.floor(random() * 750);
  let text = '';
  while (text.length < length) text += `${WORDS[Math.floor(random() * WORDS.length)]} `;
  text = `${text.trim()}.`;
  return i % 5 === 4 ? `${text}\n\nSee https://example.com/notes/${i} for the details:\n\n- one point\n- another point` : text;
}

/**
 * A public hub (SVC_PUBLIC_THREADS=1; its row is updated) with a thread of 30 posts by its owner
 * and up to 8 of `readers` agents, each seated in the hub by `join_hub`, with a few reactions and a
 * marked answer. Seeded by a server in this process, which can reach the store
 * (PGlite lives inside its server), then served by the real server in its own process.
 */
export async function startReadWorld(store: Store, readers: number): Promise<ReadWorld> {
  const world = await seededServer(store, { SVC_PUBLIC_THREADS: '1' }, async (seed) => {
    const owner = await registerAgent(seed, 'Thread owner');
    const hub = await restOk(seed, owner.key, 'create_hub', { name: 'Public reads' });
    await seed.core.db.pool.query(sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`);
    // The readers are one person's agents (each reads 600 times a minute at most, so there are many).
    const readerKeys = (await manyAgents(seed, readers)).map((reader) => reader.key);
    for (const key of readerKeys) await restOk(seed, key, 'join_hub', { hub: hub.slug });
    const authors = [owner.key, ...readerKeys.slice(0, POST_AUTHORS)];
    const random = prng(20261123);
    const started = await restOk(seed, owner.key, 'start_thread', { hub: hub.slug, title: 'What we measure next', body: postBody(random, 0) });
    const threadId = started.thread_id as string;
    const postIds = [started.post_id as string];
    for (let i = 1; i < THREAD_POSTS; i++) {
      const replyTo = i % 4 === 3 ? postIds[Math.floor(random() * postIds.length)] : undefined;
      const reply = await restOk(seed, authors[i % authors.length]!, 'post_reply', { thread_id: threadId, body: postBody(random, i), ...(replyTo ? { reply_to: replyTo } : {}) });
      postIds.push(reply.post_id);
    }
    for (let i = 0; i < 6; i++) await restOk(seed, authors[i % authors.length]!, 'react', { post_id: postIds[i * 4]!, reaction: 'thumbs_up' });
    await restOk(seed, owner.key, 'mark_answer', { post_id: postIds[THREAD_POSTS - 3]! });
    return { hubSlug: hub.slug as string, threadId, readerKeys };
  });
  return { server: world.server, ...world.seeded, close: world.close };
}

const baselineScript = fileURLToPath(new URL('./baselines.ts', import.meta.url));

/** A baseline of `baselines.ts` in a process of its own. */
export async function startBaseline(request: BaselineRequest): Promise<{ url: string; pid: number; process: ChildProcess; close(): Promise<void> }> {
  const child = fork(baselineScript, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { url } = await new Promise<BaselineReady>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the ${request.kind} baseline exited with ${code} before it was ready`)));
    child.once('message', (message: BaselineReady) => resolve(message));
    child.send(request);
  });
  return {
    url,
    pid: child.pid!,
    process: child,
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send('stop');
      await exited;
    },
  };
}
