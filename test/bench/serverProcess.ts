/**
 * The benchmark's server, in a process of its own as it runs in production (started by
 * `startServerProcess` in `setup.ts`). Beside it, on another port of the same process, the bare
 * Hocuspocus baseline: what a bare relay that commits every edit does, on the server's own
 * Hocuspocus instance, behind the thinnest HTTP endpoint Node offers.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as Y from 'yjs';
import { startServer } from '../../api/app.ts';
import { loadConfig } from '../../server/config.ts';
import { appendUpdate } from '../../sync/store.ts';
import { answerProbes, countStatements } from './probes.ts';

/** The one message this process sends its parent, once it listens. */
export type ServerReady = { url: string; bareUrl: string };
/**
 * What the bare endpoint takes: the pad, and the new text of its first paragraph; with `hold`, the
 * relay holds its update in Hocuspocus' broadcast buffer until its INSERT has committed, as
 * `edit_pad` does (`sync/liveDocs.ts`).
 */
export type BareEdit = { padId: string; text: string; hold?: boolean };

countStatements();
const running = await startServer(loadConfig(), { host: '127.0.0.1' });
const { core } = running;
answerProbes(core.sync.hocuspocus);
type Direct = Awaited<ReturnType<typeof core.sync.hocuspocus.openDirectConnection>>;
const directs = new Map<string, Promise<Direct>>();

/** Replaces the text of the first paragraph through the Y types, as a bare Hocuspocus server would. */
function replaceFirstParagraph(doc: Y.Doc, text: string) {
  const paragraph = doc.getXmlFragment('default').get(0) as Y.XmlElement;
  const textNode = paragraph.get(0) as Y.XmlText;
  textNode.delete(0, textNode.length);
  textNode.insert(0, text);
}

/**
 * One bare edit: a transaction on a held direct connection, its update appended to the pad log in
 * one committed INSERT before it is acknowledged (and, with `hold`, before it is broadcast).
 * `persisted` in the context keeps the server's own live-typing queue from appending it a second time.
 */
async function bareEdit({ padId, text, hold }: BareEdit): Promise<void> {
  if (!directs.has(padId)) directs.set(padId, core.sync.hocuspocus.openDirectConnection(padId, { persisted: true }));
  const direct = await directs.get(padId)!;
  const document = direct.document!;
  const updates: Uint8Array[] = [];
  const capture = (update: Uint8Array) => updates.push(update);
  const delay = document.flushDelay;
  if (hold) document.flushDelay = 10_000;
  document.on('update', capture);
  try {
    await direct.transact((doc) => replaceFirstParagraph(doc, text));
  } finally {
    document.off('update', capture);
    document.flushDelay = delay;
  }
  try {
    if (updates.length !== 1) throw new Error(`expected one update from the transaction, saw ${updates.length}`);
    await appendUpdate(core.db.pool, padId, updates[0]!);
  } finally {
    if (hold) document.flush();
  }
}

/** `node:http` alone: a POST of a `BareEdit` answered `{}` once committed. No routing, authentication or validation. */
const bareEndpoint = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const reply = (status: number, body: string) => response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    bareEdit(JSON.parse(Buffer.concat(chunks).toString('utf8')) as BareEdit).then(
      () => reply(200, '{}'),
      (error: Error) => reply(500, JSON.stringify({ error: error.message })),
    );
  });
});
await new Promise<void>((resolve) => bareEndpoint.listen(0, '127.0.0.1', resolve));

process.on('message', (message: 'stop' | 'waits') => {
  // How many wait_for_changes calls are open here, for the benchmark that must know they all wait.
  if (message === 'waits') process.send!({ waits: core.waits.size });
  if (message !== 'stop') return;
  bareEndpoint.closeAllConnections();
  bareEndpoint.close();
  void running.close().then(() => process.exit(0));
});
process.send!({ url: running.url, bareUrl: `http://127.0.0.1:${(bareEndpoint.address() as AddressInfo).port}/` } satisfies ServerReady);
