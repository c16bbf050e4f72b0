/**
 * The server for the live-edit benchmark, in a process of its own as it runs in production, so the
 * benchmark's clients (the agent, the editors) do not share its event loop or heap. It also performs
 * the bare Hocuspocus baseline on its own Hocuspocus instance, where a bare server would: asked over
 * IPC, or over HTTP through an endpoint of its own.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as Y from 'yjs';
import { startServer } from '../../server/app.ts';
import { loadConfig } from '../../server/config.ts';
import { appendUpdate } from '../../sync/store.ts';

export type BaselineRequest = { id: number; padId: string; text: string; commit: boolean };
export type BaselineReply = { id: number } | { id: number; error: string };

const running = await startServer(loadConfig(), { host: '127.0.0.1' });
const { core } = running;
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
 * One baseline edit: a direct-connection transaction, and with `commit` its update appended to the
 * pad log in one INSERT before the reply. `persisted` in the context keeps the server's own
 * live-typing queue from appending it a second time.
 */
async function baseline({ padId, text, commit }: BaselineRequest): Promise<void> {
  if (!directs.has(padId)) directs.set(padId, core.sync.hocuspocus.openDirectConnection(padId, { persisted: true }));
  const direct = await directs.get(padId)!;
  const updates: Uint8Array[] = [];
  const capture = (update: Uint8Array) => updates.push(update);
  direct.document!.on('update', capture);
  try {
    await direct.transact((doc) => replaceFirstParagraph(doc, text));
  } finally {
    direct.document!.off('update', capture);
  }
  if (updates.length !== 1) throw new Error(`expected one update from the transaction, saw ${updates.length}`);
  if (commit) await appendUpdate(core.db.pool, padId, updates[0]!);
}

/**
 * The same bare edit behind the thinnest HTTP endpoint Node offers, as an agent would reach a bare
 * relay: `node:http` alone, a POST of `{padId, text, commit}` answered with `{}` once done (after
 * the commit, with `commit`). No routing, no authentication, no validation.
 */
const bareEndpoint = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const reply = (status: number, body: string) => response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    const { padId, text, commit } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Omit<BaselineRequest, 'id'>;
    baseline({ id: 0, padId, text, commit }).then(
      () => reply(200, '{}'),
      (error: Error) => reply(500, JSON.stringify({ error: error.message })),
    );
  });
});
await new Promise<void>((resolve) => bareEndpoint.listen(0, '127.0.0.1', resolve));
const bareUrl = `http://127.0.0.1:${(bareEndpoint.address() as AddressInfo).port}/`;

process.on('message', (message: BaselineRequest | 'stop') => {
  if (message === 'stop') {
    bareEndpoint.closeAllConnections();
    bareEndpoint.close();
    void running.close().then(() => process.exit(0));
    return;
  }
  baseline(message).then(
    () => process.send!({ id: message.id } satisfies BaselineReply),
    (error: Error) => process.send!({ id: message.id, error: error.message } satisfies BaselineReply),
  );
});
process.send!({ ready: running.url, bareUrl });
