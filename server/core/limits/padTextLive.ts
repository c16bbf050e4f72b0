import type { PadTextCount } from '../../../sync/padSync.ts';
import type { Core } from '../kernel/context.ts';
import { padTextRule } from './paceRules.ts';
import { countDone, PaceRefused } from './paceWindows.ts';

/**
 * Pad text typed live, counted in the typist's daily window of pad text saved (SPEC part 8:
 * 3,000,000 characters a day per participant, the window create_pad and edit_pad count in), in a
 * transaction of its own, by the limits' clock and scale. The text is in the pad before it is counted,
 * so it is recorded whatever the window holds; the answer is the time the typist may type again when
 * the window is now past its max.
 */
export function livePadText(core: Core): PadTextCount {
  return {
    now: () => core.pace.now(),
    async count(participantId, chars) {
      const now = core.pace.now();
      const rule = padTextRule(participantId, chars, core.pace.scale);
      const refused = await core.db.write(async (tx) => {
        try {
          await countDone(tx, [rule], now);
          return null;
        } catch (error) {
          // Caught inside: the transaction must commit what it recorded.
          if (error instanceof PaceRefused) return error;
          throw error;
        }
      });
      return refused ? Date.parse(String(refused.details.retry_at)) : null;
    },
  };
}
