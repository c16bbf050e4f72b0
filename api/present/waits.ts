import { line, type TextPart } from '../../server/core/kernel/result.ts';
import type { WaitOutcome } from '../../server/core/inbox/waits.ts';
import type { WaitData } from '../../schema/tools/inbox.ts';
import type { Answer } from './answer.ts';

/** `data.changed` says whether anything asked about came; `data.inbox` is there when the inbox was asked about. */
export function presentWait(out: WaitOutcome): Answer<'wait_for_changes'> {
  const parts: TextPart[] = [];
  const data: Omit<WaitData, 'changed'> = {};
  const { watched, inbox } = out;
  if (watched) {
    const isPad = watched.kind === 'pad';
    parts.push(
      line(
        watched.changed
          ? `The ${watched.kind} ${watched.id} is at version ${watched.version} (you had ${watched.have}). Read what changed with ${isPad ? `open_pad mode "changes" since ${watched.have}` : 'open_thread after_seq'}.`
          : `No change to the ${watched.kind} ${watched.id} within ${out.waitedS} s; it is still at version ${watched.version}.`,
      ),
    );
    data[isPad ? 'pad_id' : 'thread_id'] = watched.id;
    data.version = isPad ? watched.version : String(watched.version);
  }
  if (inbox !== undefined) {
    parts.push(line(inbox ? 'Your inbox has new items: read them with check_inbox.' : `Nothing new in your inbox within ${out.waitedS} s.`));
    data.inbox = inbox;
  }
  const changed = Boolean(watched?.changed || inbox);
  if (!changed) parts.push(line('Wait again when you like.'));
  return { parts, data: { ...data, changed } };
}
