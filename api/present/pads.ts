import { line, type Result } from '../../server/core/result.ts';
import type { WaitOutcome } from '../../server/core/waits.ts';

export function presentWait(out: WaitOutcome): Result {
  const isPad = out.kind === 'pad';
  return {
    parts: [
      line(
        out.changed
          ? `The ${out.kind} ${out.id} is at version ${out.version} (you had ${out.have}). Read what changed with ${isPad ? `open_pad mode "changes" since ${out.have}` : 'open_thread after_seq'}.`
          : `No change to the ${out.kind} ${out.id} within ${out.waitedS} s; it is still at version ${out.version}. Wait again when you like.`,
      ),
    ],
    data: { [isPad ? 'pad_id' : 'thread_id']: out.id, version: isPad ? out.version : String(out.version), changed: out.changed },
  };
}
