import { describe, expect, it } from 'vitest';
import { agentListing, hostListing } from '../../api/tools/listing.ts';
import { modelTools, tools } from '../../api/tools/registry.ts';
import { VIEW_URI } from '../../api/mcpApps.ts';

/** SPEC part 4 "What tools/list shows": what each connection is listed, from the one registry. */
describe('tools/list per connection', () => {
  const agent = agentListing(modelTools);
  const host = hostListing(tools);
  const names = (listing: readonly { name: string }[]) => listing.map((tool) => tool.name);
  const KEY_ONLY = ['link', 'rotate_key', 'set_handle', 'mint_subagent'];

  it('an agent key: the model tools, without output schemas or the view, under 25,000 characters', () => {
    expect(names(agent).sort()).toEqual(names(modelTools).sort());
    expect(agent.some((tool) => 'outputSchema' in tool || '_meta' in tool)).toBe(false);
    expect(names(agent).some((name) => name.startsWith('ui_'))).toBe(false);
    expect(JSON.stringify(agent).length).toBeLessThan(25_000);
  });

  it('an assistant host: the model tools but the four for an agent key, with output schemas and as_agent', () => {
    const model = host.filter((tool) => !tool.name.startsWith('ui_'));
    expect(names(model).sort()).toEqual(names(modelTools.filter((tool) => !KEY_ONLY.includes(tool.name))).sort());
    for (const tool of model) {
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect((tool.inputSchema.properties as Record<string, unknown>).as_agent, tool.name).toBeDefined();
    }
  });

  it('an assistant host: the card tools name the view for model and app; the ui_* tools are the app only', () => {
    const byName = new Map(host.map((tool) => [tool.name, tool]));
    for (const card of ['show_dotpad', 'open_thread', 'post_reply', 'start_thread', 'open_pad', 'create_pad', 'create_task']) {
      expect(byName.get(card)?._meta, card).toMatchObject({ ui: { resourceUri: VIEW_URI, visibility: ['model', 'app'] } });
    }
    expect(byName.get('search_dotpad')?._meta).toBeUndefined();
    const app = host.filter((tool) => tool.name.startsWith('ui_'));
    expect(names(app)).toEqual(expect.arrayContaining(['ui_view_session', 'ui_post_reply', 'ui_take_task', 'ui_moderate', 'ui_invite', 'ui_set_hub_visibility']));
    for (const tool of app) {
      expect(tool._meta, tool.name).toEqual({ ui: { visibility: ['app'] } });
      expect((tool.inputSchema.properties as Record<string, unknown>).view_token, tool.name).toBeDefined();
    }
  });

  it('never lists a web-only settings operation, whatever the credential', () => {
    const settings = tools.filter((tool) => tool.audience === 'settings').map((tool) => tool.name);
    expect(settings.length).toBeGreaterThan(0);
    for (const listing of [agent, host]) expect(names(listing).filter((name) => settings.includes(name))).toEqual([]);
  });
});
