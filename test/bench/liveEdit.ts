import * as Y from 'yjs';
import { readBlocks } from '../../sync/blocks.ts';
import { mcpClient, registerAgent, type TestServer } from '../support/server.ts';
import { connectProvider, makePad, restOk, whenText } from './setup.ts';
import { progress, summarize, type Summary } from './stats.ts';

export type LiveEditResult = {
  edits: number;
  warmup: number;
  /** edit_pad over MCP -> the provider shows the text. */
  ours: Summary;
  /** The MCP call's own round trip (returns after the commit). */
  mcpCall: Summary;
  /** How often the provider had the text before the MCP call returned. */
  seenBeforeReply: number;
  /** Split of `ours`: from the call to the server's live transaction, and from there to the editor. */
  toTransaction: Summary;
  transactionToEditor: Summary;
  /** Bare Hocuspocus: direct connection transact -> the provider shows the text. */
  bare: Summary;
  padBlocks: number;
};

const PAD_TEXT = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of the benchmark pad, a sentence of ordinary length.`).join('\n\n');

/**
 * Measurements 1 and 2, interleaved so both see the same process state: an MCP `edit_pad` of one
 * paragraph against the current version, timed until a connected provider's document shows it;
 * then a bare Hocuspocus direct-connection transaction on a second pad, timed the same way.
 */
export async function liveEdit(server: TestServer, options: { edits: number; warmup: number }): Promise<LiveEditResult> {
  const agent = await registerAgent(server, 'Bench agent');
  const hub = await restOk(server, agent.key, 'create_hub', { name: 'Bench hub' });
  const ours = await makePad(server, agent.key, hub.slug, 'Edited over MCP', PAD_TEXT);
  const bare = await makePad(server, agent.key, hub.slug, 'Bare relay baseline', PAD_TEXT);

  const oursClient = await connectProvider(server, agent.key, ours.padId);
  const bareClient = await connectProvider(server, agent.key, bare.padId);
  const blocks = readBlocks(oursClient.doc.getXmlFragment('default'));
  if (blocks.length !== 8) throw new Error(`expected 8 blocks in the provider's copy, saw ${blocks.length}`);
  // The paragraph edited each time: the middle of the pad, as an agent would.
  const blockId = blocks[3]!.id;

  const client = await mcpClient(server, agent.key);
  const direct = await server.core.sync.hocuspocus.openDirectConnection(bare.padId, {});
  // When the server's live copy changes: splits our latency into the way in and the relay out.
  const serverDoc = server.core.sync.hocuspocus.documents.get(ours.padId);
  if (!serverDoc) throw new Error('the edited pad is not loaded on the server');
  let transactedAt = 0;
  const onServerUpdate = () => {
    transactedAt ||= performance.now();
  };
  serverDoc.on('update', onServerUpdate);

  const oursSamples: number[] = [];
  const callSamples: number[] = [];
  const bareSamples: number[] = [];
  const inSamples: number[] = [];
  const outSamples: number[] = [];
  let seenBeforeReply = 0;
  let version = ours.version;
  const total = options.warmup + options.edits;
  try {
    for (let i = 0; i < total; i++) {
      const measured = i >= options.warmup;

      // 1. edit_pad over MCP.
      const text = `edit ${i}`;
      const seen = whenText(oursClient.doc, blockId, text);
      transactedAt = 0;
      const t0 = performance.now();
      const reply = (await client.callTool({
        name: 'edit_pad',
        arguments: { pad_id: ours.padId, base_version: version, edits: [{ block_id: blockId, text }] },
      })) as { isError?: boolean; content: { text: string }[]; structuredContent?: { version?: number; conflicts?: unknown[] } };
      const replied = performance.now();
      if (reply.isError) throw new Error(`edit_pad failed at edit ${i}: ${reply.content[0]?.text}`);
      const next = reply.structuredContent?.version;
      if (typeof next !== 'number' || next <= version) throw new Error(`edit_pad at edit ${i} did not raise the version (${version} -> ${next})`);
      if (reply.structuredContent?.conflicts?.length) throw new Error(`edit_pad at edit ${i} reported conflicts`);
      version = next;
      const seenAt = await seen;
      if (measured) {
        oursSamples.push(seenAt - t0);
        callSamples.push(replied - t0);
        inSamples.push(transactedAt - t0);
        outSamples.push(seenAt - transactedAt);
        if (seenAt <= replied) seenBeforeReply++;
      }

      // 2. The bare relay: one paragraph's text replaced through the Y types, no database commit of ours.
      const bareText = `bare ${i}`;
      const bareSeen = whenText(bareClient.doc, null, bareText);
      const b0 = performance.now();
      await direct.transact((doc) => {
        const paragraph = doc.getXmlFragment('default').get(0) as Y.XmlElement;
        const textNode = paragraph.get(0) as Y.XmlText;
        textNode.delete(0, textNode.length);
        textNode.insert(0, bareText);
      });
      const bareAt = await bareSeen;
      if (measured) bareSamples.push(bareAt - b0);

      if ((i + 1) % 50 === 0) progress(`  live edits ${i + 1}/${total}`);
    }
  } finally {
    serverDoc.off('update', onServerUpdate);
    await direct.disconnect({ unloadImmediately: false });
    await client.close();
    oursClient.close();
    bareClient.close();
  }
  return {
    edits: options.edits,
    warmup: options.warmup,
    ours: summarize(oursSamples),
    mcpCall: summarize(callSamples),
    seenBeforeReply,
    toTransaction: summarize(inSamples),
    transactionToEditor: summarize(outSamples),
    bare: summarize(bareSamples),
    padBlocks: blocks.length,
  };
}
