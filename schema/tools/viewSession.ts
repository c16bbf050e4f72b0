import { z } from 'zod';

// ui_view_session: the MCP Apps view's first call; its click token rides in the result's _meta.

export const ViewSessionInput = z.object({});

/** When the click token handed out with it stops working, and whether this host's clicks are honoured. */
export const ViewSessionData = z.object({
  /** The service's address, for the view's links to the web app. */
  base_url: z.string(),
  clicks: z.boolean(),
  expires_at: z.string().optional(),
  act_on_web: z.string().optional(),
});
export type ViewSessionData = z.infer<typeof ViewSessionData>;
