import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as Y from 'yjs';
import WebSocket from 'ws';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import { readBlocks } from '../../sync/blocks.ts';
import { durableStore, rest, type Reachable, type Store } from '../support/server.ts';
import type { ServerReady } from './serverProcess.ts';

/** A tool call over REST that must succeed; returns its `data`. */
export async function restOk(server: Reachable, key: string, tool: string, args: unknown): Promise<any> {
  const reply = await rest(server, key, tool, args);
  if (reply.status !== 200 && reply.status !== 201) throw new Error(`${tool} failed: ${reply.status} ${reply.text}`);
  return reply.body.data;
}

/** A hub and a pad in it with the given Markdown; returns the pad id, its version and its block ids. */
export async function makePad(server: Reachable, key: string, hubSlug: string, title: string, text: string) {
  const data = await restOk(server, key, 'create_pad', { hub: hubSlug, title, text });
  return { padId: String(data.pad_id), version: Number(data.version) };
}

/**
 * A Node Yjs client on the pad, the way the web editor connects: `@hocuspocus/provider` over a
 * WebSocket (the `ws` package), the agent key as token. Resolves once the first sync is done.
 */
export async function connectProvider(server: Reachable, key: string, padId: string) {
  const socket = new HocuspocusProviderWebsocket({
    url: `${server.url.replace(/^http/, 'ws')}/sync`,
    WebSocketPolyfill: WebSocket,
  });
  const provider = new HocuspocusProvider({ websocketProvider: socket, name: padId, token: key });
  provider.attach();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`provider for ${padId} did not sync within 10 s`)), 10_000);
    provider.on('synced', () => {
      clearTimeout(timer);
      resolve();
    });
    provider.on('authenticationFailed', ({ reason }: { reason: string }) => {
      clearTimeout(timer);
      reject(new Error(`provider refused: ${reason}`));
    });
  });
  return {
    provider,
    doc: provider.document,
    close() {
      provider.destroy();
      socket.destroy();
    },
  };
}

/**
 * Resolves with `performance.now()` at the first document update after which block `blockId` (or,
 * with no id, the first block) reads `text` in `doc`, checked with the server's own `readBlocks`.
 */
export function whenText(doc: Y.Doc, blockId: string | null, text: string, timeoutMs = 5_000): Promise<number> {
  const fragment = doc.getXmlFragment('default');
  const shows = () => {
    const blocks = readBlocks(fragment);
    const block = blockId === null ? blocks[0] : blocks.find((b) => b.id === blockId);
    return block?.text === text;
  };
  if (shows()) return Promise.resolve(performance.now());
  return new Promise((resolve, reject) => {
    const onUpdate = () => {
      if (!shows()) return;
      const seen = performance.now();
      doc.off('update', onUpdate);
      clearTimeout(timer);
      resolve(seen);
    };
    const timer = setTimeout(() => {
      doc.off('update', onUpdate);
      reject(new Error(`the provider never showed ${JSON.stringify(text)} within ${timeoutMs} ms`));
    }, timeoutMs);
    doc.on('update', onUpdate);
  });
}

export type ToolResult = { isError?: boolean; content: { text: string }[]; structuredContent?: Record<string, any> };

/** A fresh database of the store for a server in another process: its env, and `drop()` when done. */
export async function freshDatabase(store: Store): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (store === 'postgres') return durableStore('postgres');
  // An in-memory PGlite lives and dies with its server process.
  return { env: { SVC_DATA_DIR: 'memory://' }, drop: async () => {} };
}

/** `run` against the server in a process of its own on a fresh database of `store`; both are gone after. */
export async function onFreshServer<T>(store: Store, run: (server: ServerProcess) => Promise<T>): Promise<T> {
  const database = await freshDatabase(store);
  try {
    const server = await startServerProcess(database.env);
    try {
      return await run(server);
    } finally {
      await server.close();
    }
  } finally {
    await database.drop();
  }
}

/** The server in a process of its own (`serverProcess.ts`), its bare Hocuspocus endpoint, and the process (its `pid` for CPU figures; to `probe`, probes.ts). */
export type ServerProcess = Reachable & { bareUrl: string; pid: number; process: ChildProcess; openWaits(): Promise<number>; close(): Promise<void> };

const serverScript = fileURLToPath(new URL('./serverProcess.ts', import.meta.url));

/** With BENCH_PROFILE_DIR set, each server process writes a V8 CPU profile there when it stops. */
const profiling = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE_DIR] : [];

/**
 * The real server in a child process, as in production, so the benchmark's clients share neither
 * its event loop nor its heap. `env` names its database (see `freshDatabase`).
 */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child = fork(serverScript, [], {
    execArgv: [...process.execArgv, ...profiling],
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'silent', SVC_GUEST_AGENTS: '1', ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { url, bareUrl } = await new Promise<ServerReady>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the server process exited with ${code} before it was ready`)));
    child.once('message', (message: ServerReady) => resolve(message));
  });
  return {
    url,
    bareUrl,
    pid: child.pid!,
    process: child,
    openWaits() {
      return new Promise<number>((resolve) => {
        const onMessage = (message: { waits?: number }) => {
          if (message.waits === undefined) return;
          child.off('message', onMessage);
          resolve(message.waits);
        };
        child.on('message', onMessage);
        child.send('waits');
      });
    },
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send('stop');
      await exited;
    },
  };
}
