/**
 * Registry-wide fuzz: every tool in api/tools/registry.ts, through every door, by every kind of caller.
 * The settings operations are left out: no door here serves them (test/integration/settingsDoor.test.ts),
 * and their own, `/api/settings/:op`, acts on the caller's account (deleting it, among others).
 *
 * Inputs come from each tool's JSON Schema (`z.toJSONSchema(tool.input, { io: 'input' })`) through
 * test/support/arbitraryFromSchema.ts: some keep to the schema, some break it in exactly one place
 * (wrong types, null as NaN travels, just past each bound, huge strings, values outside an enum), with
 * unicode, NUL, lone surrogates and extra keys such as `__proto__` along the way. Fields that hold ids
 * get real ids of the right kind, real ids of other kinds and made-up ones (test/support/fuzzHints.ts).
 * A new tool is fuzzed with no new test code.
 *
 * Callers: the hub's owner, a member and an outsider (agents: REST on one server, MCP on the other), a
 * signed-in person (the web app's `/api/tools/:name` on both) and nobody (401 on either door).
 *
 * Comparing doors when writes change state: every run starts two servers on fresh databases and
 * seeds the same world in both by the same calls in the same order (test/support/fuzzWorld.ts).
 * Each input goes to server A by one door and to server B by the other, so the two servers see the
 * same calls in the same order and stay alike; their answers must then agree on every input,
 * successes as well as refusals (the outcome compared is "ok" or the error code with its issue paths;
 * messages hold ids, which differ). Inputs name seeded things by reference, resolved on each server;
 * things a run creates are never named by later inputs. Reads run alike; a wait_for_changes keeps
 * its timeout at the minimum, one second.
 *
 * Asserted for every input: no status 5xx and no MCP `internal`; every refusal in the shape of SPEC
 * part 7 (a known code, its status, a message; issues as [{path, message}]), every MCP answer a tool
 * result, never a JSON-RPC error; the same outcome on both doors; an input that breaks the schema is
 * refused `invalid` (MCP text starting "Input validation error"); no key is `unauthenticated`; an
 * app-only tool is `not_found` to agents, and an agent-key-only tool to the web app.
 *
 * Every input of a tool runs and every violation is kept, then grouped with the smallest input of
 * each group, so one defect does not hide the next. FUZZ_SHRINK=1 instead stops at the first
 * violation and lets fast-check shrink it. The tools run in registry order against the same two
 * servers, so FUZZ_SEED replays the whole file, not one tool: `FUZZ_SEED=<seed> npm run fuzz`.
 * `npm test` runs FUZZ_RUNS=200 inputs per tool with FUZZ_SEED=20260601; a long run sets both.
 */
import { KEYLESS_TOOLS } from '../../api/keylessWrite.ts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { AGENT_KEY_TTL, issueCredential } from '../../server/core/identity/credentials.ts';
import { hashSecret } from '../../server/core/kernel/secrets.ts';
import type { Tool } from '../../api/tools/defineTool.ts';
import { tools } from '../../api/tools/registry.ts';
import { resolve, toolInput, type FuzzInput, type JsonSchema, type Ref } from '../support/arbitraryFromSchema.ts';
import { fieldHints } from '../support/fuzzHints.ts';
import { countsOf, seedWorld, type Caller, type World } from '../support/fuzzWorld.ts';
import { stores } from '../support/server.ts';
import { callTool, send, type Answer, type Door } from '../support/toolDoors.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_601);
const SHRINK = process.env.FUZZ_SHRINK === '1';

const callers = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Caller>('owner') },
  { weight: 3, arbitrary: fc.constant<Caller>('member') },
  { weight: 2, arbitrary: fc.constant<Caller>('outsider') },
  { weight: 2, arbitrary: fc.constant<Caller>('person') },
  { weight: 1, arbitrary: fc.constant<Caller>('nokey') },
);

type Violation = { caller: Caller; checks: string[]; answers: [Answer, Answer]; input: FuzzInput; shown: string };

const UNFIT = { NUL: /\u0000/, 'lone surrogate': /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/ };

/** Where the input holds text no store takes ("NUL at body"), to tell groups of violations apart by cause. */
function unfitText(value: unknown, path = ''): string[] {
  if (typeof value === 'string') return Object.entries(UNFIT).filter(([, re]) => re.test(value)).map(([what]) => `${what} at ${path || 'the arguments'}`);
  if (Array.isArray(value)) return value.flatMap((item) => unfitText(item, `${path}[]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => [...unfitText(key, `${path}<key>`), ...unfitText(item, path ? `${path}.${key}` : key)]);
  }
  return [];
}

/** Doors for server A and server B. */
/**
 * The agent-key-only tools may end the callers' keys (`link` `unlink` stops the keys their human
 * made; `rotate_key` cuts one to an hour): the next input runs on keys made afresh, alike in both worlds.
 */
async function freshKeys(world: World) {
  for (const caller of ['owner', 'member', 'outsider'] as const) {
    world.keys[caller] = await world.server.core.db.write(async (tx) => {
      const id = await tx.oneFirst(sql.type(z.object({ participant_id: z.string() }))`
        SELECT participant_id FROM credentials WHERE secret_hash = ${hashSecret(world.keys[caller])}`);
      return (await issueCredential(tx, id, 'agent_key', 'settings', AGENT_KEY_TTL)).secret;
    });
  }
}

const fuzzed = tools.filter((tool) => tool.audience !== 'settings');

function doorsOf(tool: Tool, caller: Caller): [Door, Door] {
  if (caller === 'person' || (caller === 'nokey' && tool.audience === 'app')) return ['app', 'app'];
  // With no key, these are the keyless first write, a door of REST alone: the two worlds must agree.
  if (caller === 'nokey' && KEYLESS_TOOLS.has(tool.name)) return ['rest', 'rest'];
  return ['rest', 'mcp'];
}

/** The input as a reviewer reads it: references by kind, long strings shortened, NUL and lone surrogates escaped. */
function show(args: unknown): string {
  const symbolic = resolve(args, (ref: Ref) => `<${ref.kind}#${ref.index}>`);
  return JSON.stringify(symbolic, (_, v) => (typeof v === 'string' && v.length > 60 ? `${v.slice(0, 24)}…(${v.length} chars)` : v));
}

describe.each(stores())('registry-wide fuzz on %s', (store) => {
  let a: World;
  let b: World;
  const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();

  beforeAll(async () => {
    [a, b] = await Promise.all([seedWorld(store), seedWorld(store)]);
  });
  afterAll(async () => {
    await Promise.all([a?.server.close(), b?.server.close()]);
  });

  async function exercise(tool: Tool, caller: Caller, input: FuzzInput): Promise<Violation[]> {
    const doors = doorsOf(tool, caller);
    const answers = (await Promise.all([
      callTool(a, doors[0], caller, tool.name, JSON.stringify(resolve(input.args, a.idOf))),
      callTool(b, doors[1], caller, tool.name, JSON.stringify(resolve(input.args, b.idOf))),
    ])) as [Answer, Answer];
    const checks: string[] = answers.flatMap((answer) => answer.problems.map((problem) => `${answer.door}: ${problem}`));
    const [x, y] = answers;
    if (x.outcome !== y.outcome) checks.push('the doors disagree');
    const expected =
      caller === 'nokey' && !KEYLESS_TOOLS.has(tool.name)
        ? 'unauthenticated'
        : (tool.audience === 'app' && caller !== 'person') || (tool.agentKeyOnly && caller === 'person')
          ? 'not_found'
          : input.breaks
            ? 'invalid'
            : undefined;
    // Past a maximum of length or count, or of a number that is a size (an invite's uses and days), is
    // answered too_large (SPEC part 8 "Sizes"); sizes.test.ts pins which.
    const sized = expected === 'invalid' && /characters|items|maximum|2\^|1e308/.test(input.breaks ?? '');
    for (const answer of answers) {
      const outcome = answer.outcome.split('(')[0];
      if (expected && outcome !== expected && !(sized && outcome === 'too_large')) checks.push(`${answer.door}: ${expected} expected`);
      if (expected === 'invalid' && answer.door === 'mcp' && !answer.text.startsWith('Input validation error')) checks.push('mcp: schema failure text not "Input validation error…"');
    }
    return checks.length ? [{ caller, checks: [...new Set(checks)], answers, input, shown: show(input.args) }] : [];
  }

  function report(tool: Tool, violations: Violation[]): string {
    const groups = new Map<string, Violation[]>();
    for (const v of violations) {
      const [x, y] = v.answers;
      const cause = [...new Set(unfitText(resolve(v.input.args, () => 'id')))].join(', ') || 'no NUL or lone surrogate';
      const key = `${v.checks.join('; ')} — ${x.door} ${x.status} ${x.outcome} / ${y.door} ${y.status} ${y.outcome} — ${cause}`;
      groups.set(key, [...(groups.get(key) ?? []), v]);
    }
    const lines = [`${violations.length} inputs with violations in ${tool.name} on ${store} (FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}; replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} npm run fuzz)`];
    for (const [key, list] of [...groups].sort((p, q) => q[1].length - p[1].length)) {
      const smallest = [...list].sort((p, q) => p.shown.length - q.shown.length).slice(0, 3);
      lines.push(`\n● ${key} ×${list.length}, callers ${[...new Set(list.map((v) => v.caller))].join(', ')}; message: ${list[0]!.answers.find((ans) => ans.message)?.message ?? ''}`);
      for (const v of smallest) lines.push(`    ${v.caller}: ${v.shown}${v.input.breaks ? `   (breaks ${v.input.breaks})` : ''}`);
    }
    return lines.join('\n');
  }

  it.each(fuzzed.map((tool, index) => [tool.name, tool, index] as const))(
    '%s: no 5xx, refusals in the spec shape, the same outcome on both doors',
    async (_, tool, index) => {
      const schema = z.toJSONSchema(tool.input, { io: 'input' }) as JsonSchema;
      const inputs = fc.tuple(callers, toolInput(schema, fieldHints(countsOf(a))));
      const violations: Violation[] = [];
      await fc.assert(
        fc.asyncProperty(inputs, async ([caller, input]) => {
          const found = await exercise(tool, caller, input);
          violations.push(...found);
          if (tool.agentKeyOnly) await Promise.all([freshKeys(a), freshKeys(b)]);
          if (SHRINK && found.length) throw new Error(report(tool, found));
        }),
        { seed: SEED + index, numRuns: RUNS },
      );
      expect(violations.length, report(tool, violations)).toBe(0);
    },
    30_000 + RUNS * 400,
  );

  it('leaves Object.prototype as it was', () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  describe('tools/call that is not well formed', () => {
    const rpc = (params: unknown) =>
      send(
        `${a.server.url}/mcp`,
        { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${a.keys.member}` },
        JSON.stringify({ jsonrpc: '2.0', id: 41, method: 'tools/call', ...(params === undefined ? {} : { params }) }),
      );

    it.each([
      ['params missing', undefined],
      ['params as a string', 'open_hub'],
      ['params as an array', ['open_hub', { hub: 'fuzz-hub' }]],
      ['name missing', { arguments: { hub: 'fuzz-hub' } }],
      ['name not a string', { name: 7, arguments: { hub: 'fuzz-hub' } }],
      ['params null', null],
    ])('%s: JSON-RPC error -32602 (Invalid params)', async (_, params) => {
      const reply = await rpc(params);
      expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: 41, error: { code: -32602, message: expect.any(String) } });
    });

    it.each([
      ['left out', undefined],
      ['null', null],
    ])('arguments %s: a tool result refusing the missing field', async (_, args) => {
      const reply = await rpc({ name: 'open_hub', ...(args === undefined ? {} : { arguments: args }) });
      expect(reply.body.result).toMatchObject({ isError: true, structuredContent: { error: 'invalid', issues: [{ path: 'hub' }] } });
    });

    it.each([
      ['an array', ['fuzz-hub']],
      ['a string', '{"hub":"fuzz-hub"}'],
      ['a number', 42],
    ])('arguments as %s: a tool result refusing them, as every other input failure', async (_, args) => {
      const reply = await rpc({ name: 'open_hub', arguments: args });
      expect(reply.body.result).toMatchObject({ isError: true, structuredContent: { error: 'invalid', issues: [{ path: '' }] } });
    });

    it.each([['an array', '["fuzz-hub"]'], ['a string', '"fuzz-hub"'], ['a number', '42'], ['null', 'null'], ['true', 'true']])(
      'REST with a body that is %s: 400 invalid',
      async (_, body) => {
        const reply = await send(`${a.server.url}/api/v1/tools/open_hub`, { 'content-type': 'application/json', authorization: `Bearer ${a.keys.member}` }, body);
        expect(reply.status).toBe(400);
        expect(reply.body).toMatchObject({ error: 'invalid', message: expect.any(String) });
      },
    );
  });
});
