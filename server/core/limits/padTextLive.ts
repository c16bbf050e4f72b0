import type { PadTextCount } from '../../../sync/padSync.ts';
import type { Core } from '../kernel/context.ts';
import { padTextRule } from './paceRules.ts';
import { countEachDone } from './paceWindows.ts';

/**
 * Pad text typed live, counted in each typist's daily window of pad text saved (SPEC part 8:
 * 3,000,000 characters a day per participant, the window create_pad and edit_pad count in), all the
 * typists of one count in one transaction of one statement, by the limits' clock and scale. The text
 * is in the pad before it is counted, so it is recorded whatever the window holds; the answer names
 * the typists whose window is now past its max, with the time each may type again.
 */
export function livePadText(core: Core): PadTextCount {
  return {
    now: () => core.pace.now(),
    async count(typed) {
      const now = core.pace.now();
      // One window per typist (its key is theirs alone), so no two rules of the call share a key.
      const typists = [...typed];
      const rules = typists.map(([participantId, chars]) => padTextRule(participantId, chars, core.pace.scale));
      const full = await core.db.write((tx) => countEachDone(tx, rules, now));
      const stopped = new Map<string, number>();
      for (const [i, until] of full) stopped.set(typists[i]![0], until);
      return stopped;
    },
  };
}
