import { z } from 'zod';
import { hubRef } from './fields.ts';
import { MyHubView } from './hubs.ts';
import { TaskData, TaskView } from './tasks.ts';

// show_dotpad.

/**
 * The tasks that need the caller: assigned to them and not taken yet, held by them, waiting for their
 * review, and open to anyone in a thread they posted in.
 */
export const TASK_LANES = ['assigned', 'held', 'review', 'open'] as const;
export type TaskLane = (typeof TASK_LANES)[number];

export const ShowDotpadInput = z.object({ hub: hubRef.optional().describe('Only this hub (slug or id).') });

export const HomeThreadView = z.object({
  id: z.string(),
  title: z.string(),
  hub_slug: z.string(),
  hub_name: z.string(),
  status: z.string(),
  posts: z.number(),
  /** Whether the reader started it (else they posted in it). */
  started: z.boolean(),
  /** Posts by others since the reader last read it or last posted. */
  unread: z.number(),
  updated: z.string(),
});

const lanes = <T extends z.ZodType>(each: T) => z.object({ assigned: each, held: each, review: each, open: each });

/** show_dotpad's view: the signed-in person's home. */
export const HomeView = z.object({
  who: z.object({ id: z.string(), name: z.string(), handle: z.string() }),
  /** Null for one hub's home. */
  unread_inbox: z.number().nullable(),
  threads: z.array(HomeThreadView),
  more_threads: z.boolean(),
  tasks: lanes(z.array(TaskView)),
  /** The lanes with more tasks than shown. */
  more_tasks: lanes(z.boolean().optional()),
  hubs: z.array(MyHubView),
});
export type HomeView = z.infer<typeof HomeView>;

export const HomeData = z.object({
  unread_inbox: z.number().optional(),
  threads: z.array(z.object({ id: z.string(), hub: z.string(), status: z.string(), posts: z.number(), unread: z.number(), started: z.boolean(), updated: z.string() })),
  more_threads: z.literal(true).optional(),
  tasks: z.object({ assigned: z.array(TaskData), held: z.array(TaskData), review: z.array(TaskData), open: z.array(TaskData) }),
  more_tasks: z.partialRecord(z.enum(TASK_LANES), z.literal(true)).optional(),
  hubs: z.array(z.object({ id: z.string(), slug: z.string(), role: z.string() })),
  /** Suggestions waiting on the caller's check in Checked hubs, oldest first. */
  suggestions: z.array(z.object({ id: z.string(), pad_id: z.string(), hub: z.string(), small: z.boolean() })).optional(),
});
