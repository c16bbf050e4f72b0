import { fork, type ChildProcess } from 'node:child_process';
import type * as Y from 'yjs';
import { fileURLToPath } from 'node:url';
import { readBlocks } from '../../sync/blocks.ts';
import { mcpClient, registerAgent, typeInto, type Reachable } from '../support/server.ts';
import { connectProvider, httpMcpClient, makePad, restOk, socketMcpClient, socketPoster, whenText, type ToolResult } from './setup.ts';
import type { BaselineReply, BaselineRequest } from './serverProcess.ts';
import { progress, prng, summarize, type Summary } from './stats.ts';

/** One agent's edit_pad calls over MCP. */
export type AgentFigures = {
  agent: AgentName;
  /** edit_pad -> the provider shows the text. */
  shown: Summary;
  /** edit_pad -> the provider shows the text and the call has answered (after its commit). */
  durable: Summary;
  /** The MCP call's own round trip (returns after the commit). */
  call: Summary;
  /** How often the provider had the text before the MCP call returned. */
  seenBeforeReply: number;
};

/** The agents, each with its own client: the first is the one the targets are taken on. */
export const AGENTS = ['socket', 'node:http', 'SDK'] as const;
export type AgentName = (typeof AGENTS)[number];

export type LiveEditResult = {
  edits: number;
  warmup: number;
  /** In the order of AGENTS. */
  agents: AgentFigures[];
  /** Bare Hocuspocus with a commit per edit: direct-connection transact, its update appended in one committed INSERT; asked over HTTP. */
  bare: Summary;
  bareDurable: Summary;
  /** The same bare edit asked over IPC, which the server reads more cheaply than any HTTP request. */
  bareIpc: Summary;
  bareIpcDurable: Summary;
  /** The relay alone, nothing written: the floor. */
  relay: Summary;
  /** edit_pad -> shown, on a pad someone is typing in. */
  whileTyping: Summary;
};

/** The server in its own process; `baseline` runs one bare Hocuspocus edit inside it. */
export type ServerProcess = Reachable & {
  baseline(padId: string, text: string, commit: boolean): Promise<void>;
  /** The server process's bare HTTP endpoint for the same baseline edit. */
  bareUrl: string;
  close(): Promise<void>;
};

const serverScript = fileURLToPath(new URL('./serverProcess.ts', import.meta.url));

export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child: ChildProcess = fork(serverScript, [], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'silent', SVC_GUEST_AGENTS: '1', ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  let nextId = 1;
  const { url, bareUrl } = await new Promise<{ url: string; bareUrl: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the server process exited with ${code} before it was ready`)));
    child.on('message', (message: { ready?: string; bareUrl?: string } & Partial<BaselineReply>) => {
      if (message.ready) return resolve({ url: message.ready, bareUrl: message.bareUrl! });
      const waiting = pending.get(message.id!);
      pending.delete(message.id!);
      if ('error' in message) waiting?.reject(new Error(message.error));
      else waiting?.resolve();
    });
  });
  return {
    url,
    bareUrl,
    baseline(padId, text, commit) {
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ id, padId, text, commit } satisfies BaselineRequest);
      });
    },
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send('stop');
      await exited;
    },
  };
}

const PAD_TEXT = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of the benchmark pad, a sentence of ordinary length.`).join('\n\n');

/**
 * Measurements 1 and 2, interleaved so all see the same state of the machine: an MCP `edit_pad` of
 * one paragraph against the current version, timed until a connected provider's document shows it;
 * then on a second pad a bare Hocuspocus direct-connection transaction whose update is committed to
 * the pad log, timed the same way; then on a third pad the relay alone, with nothing written.
 */
export async function liveEdit(server: ServerProcess, options: { edits: number; warmup: number }): Promise<LiveEditResult> {
  const agent = await registerAgent(server, 'Bench agent');
  const hub = await restOk(server, agent.key, 'create_hub', { name: 'Bench hub' });
  const clients = { socket: socketMcpClient, 'node:http': httpMcpClient, SDK: mcpClient } satisfies Record<AgentName, unknown>;
  // Each agent edits a pad of its own, watched by a provider of its own.
  const agents = [];
  for (const name of AGENTS) {
    const pad = await makePad(server, agent.key, hub.slug, `Edited over MCP by the ${name} client`, PAD_TEXT);
    const watcher = await connectProvider(server, agent.key, pad.padId);
    const blocks = readBlocks(watcher.doc.getXmlFragment('default'));
    if (blocks.length !== 8) throw new Error(`expected 8 blocks in the provider's copy, saw ${blocks.length}`);
    // The paragraph edited each time: the middle of the pad, as an agent would.
    const blockId = blocks[3]!.id;
    const client = await clients[name](server, agent.key);
    agents.push({ name, pad, watcher, blockId, client, version: pad.version, shown: [] as number[], durable: [] as number[], call: [] as number[], seenBeforeReply: 0 });
  }
  const client = agents[0]!.client;
  const bare = await makePad(server, agent.key, hub.slug, 'Bare relay baseline', PAD_TEXT);
  const relay = await makePad(server, agent.key, hub.slug, 'Relay alone', PAD_TEXT);
  const bareClient = await connectProvider(server, agent.key, bare.padId);
  const bareIpc = await makePad(server, agent.key, hub.slug, 'Bare relay baseline, asked over IPC', PAD_TEXT);
  const bareIpcClient = await connectProvider(server, agent.key, bareIpc.padId);
  const barePoster = await socketPoster(server.bareUrl);
  const relayClient = await connectProvider(server, agent.key, relay.padId);

  const typed = await makePad(server, agent.key, hub.slug, 'Typed in while edited', PAD_TEXT);
  const typist = await connectProvider(server, agent.key, typed.padId);
  const typedClient = await connectProvider(server, agent.key, typed.padId);
  const typedBlocks = readBlocks(typist.doc.getXmlFragment('default'));
  const typedFirst = typedBlocks[0]!.id;
  const typedBlockId = typedBlocks[3]!.id;
  let typedVersion = typed.version;

  /** One MCP edit_pad of one block, timed until `watcher` shows it and until the call answers. */
  const timedEdit = async (agentClient: { callTool(request: { name: string; arguments: Record<string, unknown> }): Promise<unknown> }, padId: string, watcher: Y.Doc, block: string, text: string, base: number, i: number) => {
    const seen = whenText(watcher, block, text);
    const t0 = performance.now();
    const reply = (await agentClient.callTool({
      name: 'edit_pad',
      arguments: { pad_id: padId, base_version: base, edits: [{ block_id: block, text }] },
    })) as ToolResult;
    const replied = performance.now();
    if (reply.isError) throw new Error(`edit_pad failed at edit ${i}: ${reply.content[0]?.text}`);
    const version = reply.structuredContent?.version;
    if (typeof version !== 'number' || version <= base) throw new Error(`edit_pad at edit ${i} did not raise the version (${base} -> ${version})`);
    if (reply.structuredContent?.conflicts?.length) throw new Error(`edit_pad at edit ${i} reported conflicts`);
    return { t0, replied, seenAt: await seen, version };
  };

  const samples = { bare: [] as number[], bareDurable: [] as number[], bareIpc: [] as number[], bareIpcDurable: [] as number[], relay: [] as number[], whileTyping: [] as number[] };
  type Step = (i: number, measured: boolean) => Promise<void>;

  // 1. edit_pad over MCP, one step per agent.
  const agentSteps = agents.map((a): Step => async (i, measured) => {
    const text = `edit ${i}`;
    const edit = await timedEdit(a.client, a.pad.padId, a.watcher.doc, a.blockId, text, a.version, i);
    a.version = edit.version;
    if (!measured) return;
    a.shown.push(edit.seenAt - edit.t0);
    a.durable.push(Math.max(edit.seenAt, edit.replied) - edit.t0);
    a.call.push(edit.replied - edit.t0);
    if (edit.seenAt <= edit.replied) a.seenBeforeReply++;
  });

  /**
   * One bare edit of the first paragraph to `text`, asked by `ask` (which settles once it is
   * acknowledged), timed until `watcher` shows it, and until it is shown and acknowledged.
   */
  const timedBare = async (watcher: Y.Doc, text: string, ask: () => Promise<void>) => {
    const seen = whenText(watcher, null, text);
    const t0 = performance.now();
    const acked = ask().then(() => performance.now());
    const [seenAt, ackedAt] = await Promise.all([seen, acked]);
    return { shown: seenAt - t0, durable: Math.max(seenAt, ackedAt) - t0 };
  };

  // 2. Bare Hocuspocus with a commit per edit: asked over HTTP by the same socket client as the
  // first agent, and over IPC.
  const bareStep: Step = async (i, measured) => {
    const text = `bare ${i}`;
    const edit = await timedBare(bareClient.doc, text, async () => {
      const reply = await barePoster.post({ padId: bare.padId, text, commit: true });
      if (reply.status !== 200) throw new Error(`the bare endpoint answered ${reply.status} ${reply.body}`);
    });
    if (!measured) return;
    samples.bare.push(edit.shown);
    samples.bareDurable.push(edit.durable);
  };
  const bareIpcStep: Step = async (i, measured) => {
    const text = `bare ${i}`;
    const edit = await timedBare(bareIpcClient.doc, text, () => server.baseline(bareIpc.padId, text, true));
    if (!measured) return;
    samples.bareIpc.push(edit.shown);
    samples.bareIpcDurable.push(edit.durable);
  };

  // 3. The relay alone.
  const relayStep: Step = async (i, measured) => {
    const text = `relay ${i}`;
    const edit = await timedBare(relayClient.doc, text, () => server.baseline(relay.padId, text, false));
    if (measured) samples.relay.push(edit.shown);
  };

  // 4. edit_pad while someone types in the first paragraph of the same pad: their keystroke has
  // just been sent, the edit's base is the agent's last version (older than the live typing), and
  // a second person's editor is watched.
  const typedStep: Step = async (i, measured) => {
    typeInto(typist.doc, typist.doc.getXmlFragment('default'), typedFirst, 'end', 'x');
    const typedEdit = await timedEdit(client, typed.padId, typedClient.doc, typedBlockId, `edit ${i}`, typedVersion, i);
    typedVersion = typedEdit.version;
    if (measured) samples.whileTyping.push(typedEdit.seenAt - typedEdit.t0);
  };

  // Each round runs every step once, in an order shuffled afresh (from a fixed seed, so every run
  // takes the same orders): every measurement comes first, last and after each of the others about
  // equally often, so none inherits more than its share of what the step before it leaves running
  // (a version being written, typing being flushed). A fixed order, even rotated, keeps each
  // step's neighbour.
  const steps = [...agentSteps, bareStep, bareIpcStep, relayStep, typedStep];
  const random = prng(20261122);
  const total = options.warmup + options.edits;
  try {
    for (let i = 0; i < total; i++) {
      const measured = i >= options.warmup;
      for (let k = steps.length - 1; k > 0; k--) {
        const j = Math.floor(random() * (k + 1));
        [steps[k], steps[j]] = [steps[j]!, steps[k]!];
      }
      for (const step of steps) await step(i, measured);
      if ((i + 1) % 50 === 0) progress(`  live edits ${i + 1}/${total}`);
    }
  } finally {
    for (const a of agents) {
      await a.client.close();
      a.watcher.close();
    }
    bareClient.close();
    bareIpcClient.close();
    barePoster.close();
    relayClient.close();
    typist.close();
    typedClient.close();
  }
  return {
    edits: options.edits,
    warmup: options.warmup,
    agents: agents.map((a) => ({ agent: a.name, shown: summarize(a.shown), durable: summarize(a.durable), call: summarize(a.call), seenBeforeReply: a.seenBeforeReply })),
    bare: summarize(samples.bare),
    bareDurable: summarize(samples.bareDurable),
    bareIpc: summarize(samples.bareIpc),
    bareIpcDurable: summarize(samples.bareIpcDurable),
    relay: summarize(samples.relay),
    whileTyping: summarize(samples.whileTyping),
  };
}
