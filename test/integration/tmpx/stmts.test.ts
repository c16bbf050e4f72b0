import pg from 'pg';
import { it } from 'vitest';
import { rest, startTestServer } from '../../support/server.ts';
import { spreadEditors } from '../../bench/spread.ts';

it('statements per edit', async () => {
  const sent: string[] = [];
  let counting = false;
  const query = pg.Client.prototype.query;
  (pg.Client.prototype as any).query = function (this: any, config: any, ...r: unknown[]) {
    if (counting && this.connectionParameters?.application_name !== 'dotpad change feed') sent.push(typeof config === 'string' ? config : String(config?.text ?? config));
    return (query as any).call(this, config, ...r);
  };
  const server = await startTestServer('postgres', { SVC_PACE_SCALE: '1' });
  const N = Number(process.env.AGENTS ?? 100);
  const { pads } = await spreadEditors(server, N, 'S', Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of the pad.`).join('\n\n'));
  const blocks: string[] = [];
  for (const p of pads) blocks.push((await rest(server, p.agent.key, 'open_pad', { pad_id: p.padId, mode: 'full' })).body.data.blocks[3]);
  const versions = pads.map((p) => p.version);
  const per: number[] = [];
  const kinds = new Map<string, number>();
  const t0 = Date.now();
  for (let i = 0; i < Number(process.env.EDITS ?? 3000); i++) {
    const k = i % N;
    sent.length = 0; counting = true;
    const r = await rest(server, pads[k]!.agent.key, 'edit_pad', { pad_id: pads[k]!.padId, base_version: versions[k], edits: [{ block_id: blocks[k], text: `Edit ${i} of the pad.` }] });
    counting = false;
    if (r.status !== 200) throw new Error(r.text);
    versions[k] = r.body.data.version;
    if (i > 500) { per.push(sent.length); for (const s of sent) { const key = s.replace(/\s+/g, ' ').slice(0, 70); kinds.set(key, (kinds.get(key) ?? 0) + 1); } }
  }
  const hist = new Map<number, number>(); for (const n of per) hist.set(n, (hist.get(n) ?? 0) + 1);
  console.log('ms', Date.now() - t0, 'mean', per.reduce((a, b) => a + b, 0) / per.length, [...hist].sort());
  console.log([...kinds].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} ${k}`).join('\n'));
  pg.Client.prototype.query = query;
  await server.close();
}, 600_000);
