import { describe, expect, it } from 'vitest';
import { createEditorCache, EDITOR_TTL_MS, type EditablePad } from '../../server/core/kernel/editors.ts';

const grant = (padId: string): EditablePad => ({
  pad: { id: padId, hub_id: 'hub_1', thread_id: null, title: 'Plan', created_by: 'p_owner', created_at: 0, updated_at: 0, locked_by: null },
  hub: { id: 'hub_1', slug: 'plans', name: 'Plans', readme: '', audience: 'public', mode: 'open', owner_id: 'p_owner', accepts_guests: false, created_at: 0, updated_at: 0 },
  seat: 'member',
});

describe('the editor cache', () => {
  it('keeps a grant for EDITOR_TTL_MS and no longer', () => {
    let now = 1_000;
    const cache = createEditorCache(() => now);
    cache.set('p_1', grant('pad_a'));
    expect(cache.get('p_1', 'pad_a')?.seat).toBe('member');
    expect(cache.get('p_2', 'pad_a')).toBeNull();
    expect(cache.get('p_1', 'pad_b')).toBeNull();
    now += EDITOR_TTL_MS - 1;
    expect(cache.get('p_1', 'pad_a')).not.toBeNull();
    now += 1;
    expect(cache.get('p_1', 'pad_a')).toBeNull();
  });

  it('forgets one participant’s grants, or everyone’s', () => {
    const cache = createEditorCache(() => 0);
    cache.set('p_1', grant('pad_a'));
    cache.set('p_1', grant('pad_b'));
    cache.set('p_10', grant('pad_a'));
    cache.forget('p_1');
    expect(cache.get('p_1', 'pad_a')).toBeNull();
    expect(cache.get('p_1', 'pad_b')).toBeNull();
    // A participant whose id starts with another's is not caught up in it.
    expect(cache.get('p_10', 'pad_a')).not.toBeNull();
    cache.forget();
    expect(cache.get('p_10', 'pad_a')).toBeNull();
  });
});
