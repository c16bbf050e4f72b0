import type { Context } from 'koa';
import { AppError } from '../schema/errors.ts';
import { matchRoute } from '../schema/pages.ts';
import type { Core } from '../server/core/kernel/context.ts';
import { readableHub } from '../server/core/places/hubAccess.ts';
import { readablePad } from '../server/core/pads/pads.ts';
import { readableThread } from '../server/core/threads/threadAccess.ts';
import { optionalReader } from './http/auth.ts';

/**
 * Whether a page the web app is asked for shows nothing there: no page of the app at that path, or
 * a hub, thread or pad the reader may not read (private and missing alike). The app's page still goes
 * out, with `404`, so no missing page answers `200` (SPEC part 4: no soft 404s).
 */
export function missingPage(core: Core) {
  return async (ctx: Context): Promise<boolean> => {
    const route = matchRoute(ctx.path);
    if (route.name === 'not-found') return true;
    if (route.name !== 'hub' && route.name !== 'thread' && route.name !== 'pad') return false;
    // A bad credential shows the app, which asks to sign in again; it reads as signed out here.
    const actor = await optionalReader(ctx, core).then((reader) => reader.actor, () => null);
    try {
      if (route.name === 'hub') await readableHub(core, core.db.pool, route.slug, actor);
      else if (route.name === 'thread') await readableThread(core, core.db.pool, route.id, actor);
      else await readablePad(core, core.db.pool, route.id, actor);
      return false;
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') return true;
      throw error;
    }
  };
}
