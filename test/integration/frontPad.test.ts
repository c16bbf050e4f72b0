import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDoors, type AgentDoor } from '../support/agentDoors.ts';
import { appTool, mcpClient, registerAgent, request, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * A hub's front pad (issue 20, item 16): the owner or a helper chooses it in the web app
 * (`ui_set_front_pad`, an app tool); `open_hub` shows it beside the Read me first to every reader,
 * through MCP, REST and the web app alike; a hub has none until one is chosen.
 */
const DOORS: AgentDoor[] = ['rest', 'mcp'];

describe.each(stores())('the front pad on %s', (store) => {
  let server: TestServer;
  let doors: ReturnType<typeof agentDoors>;
  let owner: { cookie: string; id: string };
  let helper: { cookie: string; id: string };
  let member: { cookie: string; id: string };
  let agent: { key: string; id: string; handle: string };
  const hub = { id: '', slug: '' };
  const pads = { plan: '', notes: '', elsewhere: '' };

  const frontPadOf = async (cookie: string) => (await appTool(server, cookie, 'open_hub', { hub: hub.slug })).body.view.front_pad;

  beforeAll(async () => {
    server = await startTestServer(store);
    doors = agentDoors(server);
    owner = await signIn(server, 'Owner Ora', 'ora@example.test');
    helper = await signIn(server, 'Helper Hob', 'hob@example.test');
    member = await signIn(server, 'Member Moe', 'moe@example.test');
    agent = await registerAgent(server, 'Reader Rex');
    const made = await appTool(server, owner.cookie, 'create_hub', { name: 'Garden Club' });
    Object.assign(hub, { id: made.body.data.hub_id, slug: made.body.data.slug });
    await appTool(server, owner.cookie, 'set_hub_guide', { hub: hub.slug, text: 'Be kind to the roses.' });
    for (const [who, ask] of [
      [helper.id, () => appTool(server, helper.cookie, 'join_hub', { hub: hub.slug })],
      [member.id, () => appTool(server, member.cookie, 'join_hub', { hub: hub.slug })],
      [agent.id, () => doors.call('rest', agent, 'join_hub', { hub: hub.slug })],
    ] as const) {
      await ask();
      expect((await appTool(server, owner.cookie, 'moderate', { hub: hub.slug, action: 'let_in', who })).status).toBe(200);
    }
    expect((await appTool(server, owner.cookie, 'moderate', { hub: hub.slug, action: 'name_helper', who: helper.id })).status).toBe(200);
    pads.plan = (await appTool(server, owner.cookie, 'create_pad', { hub: hub.slug, title: 'Planting plan' })).body.data.pad_id;
    pads.notes = (await appTool(server, owner.cookie, 'create_pad', { hub: hub.slug, title: 'Meeting notes' })).body.data.pad_id;
    const other = await appTool(server, owner.cookie, 'create_hub', { name: 'Other Club' });
    pads.elsewhere = (await appTool(server, owner.cookie, 'create_pad', { hub: other.body.data.slug, title: 'Not here' })).body.data.pad_id;
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  it('a hub has none until one is chosen: open_hub shows no front pad on any door', async () => {
    for (const door of DOORS) {
      const read = await doors.call(door, agent, 'open_hub', { hub: hub.slug });
      expect(read.ok, door).toBe(true);
      expect(read.text, door).not.toContain('## Front pad');
      expect(read.body.front_pad, door).toBeUndefined();
    }
    expect(await frontPadOf(owner.cookie)).toBeNull();
  });

  it('the owner chooses one in the web app; open_hub shows it beside the Read me first through MCP, REST and the web app', async () => {
    const chosen = await appTool(server, owner.cookie, 'ui_set_front_pad', { hub: hub.slug, pad_id: pads.plan });
    expect(chosen.status).toBe(200);
    expect(chosen.body.data).toEqual({ hub_id: hub.id, front_pad_id: pads.plan, status: 'changed' });
    for (const door of DOORS) {
      const read = await doors.call(door, agent, 'open_hub', { hub: hub.slug });
      const readme = read.text.indexOf('## Read me first');
      const front = read.text.indexOf('## Front pad');
      expect(readme, door).toBeGreaterThan(-1);
      expect(front, door).toBeGreaterThan(readme);
      expect(read.text.indexOf('## Threads'), door).toBeGreaterThan(front);
      expect(read.text.slice(front), door).toContain(`Planting plan · ${pads.plan} · version`);
      expect(read.text.slice(front), door).toContain(`open_pad "${pads.plan}"`);
      expect(read.body.front_pad, door).toMatchObject({ id: pads.plan, version: expect.any(Number) });
    }
    expect(await frontPadOf(member.cookie)).toMatchObject({ id: pads.plan, title: 'Planting plan' });
    // Choosing it again changes nothing.
    expect((await appTool(server, owner.cookie, 'ui_set_front_pad', { hub: hub.slug, pad_id: pads.plan })).body.data.status).toBe('unchanged');
  });

  it('a helper may choose it; a member may not, nor a pad of another hub, and a refused call changes nothing', async () => {
    const refused = await appTool(server, member.cookie, 'ui_set_front_pad', { hub: hub.slug, pad_id: pads.notes });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'forbidden', message: 'Only the owner and helpers of this hub choose its front pad.' });
    const foreign = await appTool(server, owner.cookie, 'ui_set_front_pad', { hub: hub.slug, pad_id: pads.elsewhere });
    expect(foreign.status).toBe(404);
    expect(foreign.body.message).toContain(`open_hub "${hub.slug}"`);
    expect((await frontPadOf(owner.cookie)).id).toBe(pads.plan);

    expect((await appTool(server, helper.cookie, 'ui_set_front_pad', { hub: hub.slug, pad_id: pads.notes })).status).toBe(200);
    expect((await frontPadOf(member.cookie)).id).toBe(pads.notes);
  });

  it('is an app tool: not listed for an agent, and unknown on MCP and REST, changing nothing', async () => {
    const client = await mcpClient(server, agent.key);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('ui_set_front_pad');
    await client.close();
    const listed = (await request(`${server.url}/api/v1/tools`, { headers: { authorization: `Bearer ${agent.key}` } })).body.tools.map((t: { name: string }) => t.name);
    expect(listed).not.toContain('ui_set_front_pad');
    for (const door of DOORS) {
      const called = await doors.call(door, agent, 'ui_set_front_pad', { hub: hub.slug, pad_id: null });
      expect(called.ok, door).toBe(false);
      expect(called.body, door).toMatchObject({ error: 'not_found', message: 'Unknown tool.' });
    }
    expect((await frontPadOf(owner.cookie)).id).toBe(pads.notes);
  });

  it('null leaves the hub with none again', async () => {
    const cleared = await appTool(server, owner.cookie, 'ui_set_front_pad', { hub: hub.slug, pad_id: null });
    expect(cleared.body.data).toEqual({ hub_id: hub.id, front_pad_id: null, status: 'changed' });
    expect(await frontPadOf(owner.cookie)).toBeNull();
    const read = await doors.call('mcp', agent, 'open_hub', { hub: hub.slug });
    expect(read.text).not.toContain('## Front pad');
    expect((await appTool(server, owner.cookie, 'ui_set_front_pad', { hub: hub.slug, pad_id: null })).body.data.status).toBe('unchanged');
  });
});
