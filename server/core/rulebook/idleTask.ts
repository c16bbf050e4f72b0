import { sql } from 'slonik';
import { z } from 'zod';
import { HELD, IDLE_HOURS } from '../tasks/tasks.ts';
import { HOUR, movedObjects, type TransactionRule } from './rule.ts';
import { threadsMoved } from '../kernel/afterCommit.ts';

/**
 * Idle task (SPEC part 3 "Task timing"): a task someone holds with no progress for 48 hours opens
 * again for anyone, and its thread's version rises. A task it opened is no longer held, so a second
 * run at the same time moves nothing.
 */
export const idleTask: TransactionRule = {
  name: 'idle_task',
  async apply(tx, now) {
    const before = new Date(now.getTime() - IDLE_HOURS * HOUR).toISOString();
    const rows = await tx.any(sql.type(z.object({ id: z.string(), thread_id: z.string() }))`
      UPDATE tasks SET state = 'open', assignee_id = NULL, note = 'Opened again after 48 hours without progress.',
        progress_at = ${now.toISOString()}, updated_at = ${now.toISOString()}
      WHERE state = ANY(${sql.array([...HELD], 'text')}) AND progress_at < ${before}
      RETURNING id, thread_id`);
    const threads = [...new Set(rows.map((row) => row.thread_id))];
    if (threads.length) {
      await tx.query(sql.unsafe`UPDATE threads SET version = version + 1, updated_at = now() WHERE id = ANY(${sql.array(threads, 'text')})`);
      threadsMoved(tx, ...threads);
    }
    return movedObjects(rows.map((row) => row.id));
  },
};
