import { isIP } from 'node:net';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Context, Middleware } from 'koa';
import { AppError } from '../../schema/errors.ts';
import { scaled } from '../../server/core/kernel/pace.ts';
import type { Logger } from '../../server/db/logger.ts';

/**
 * Per-IP route limits (SPEC part 8): fixed windows, counted in Redis when REDIS_URL is set (so every
 * instance shares them), else in this instance's memory. A network is an IPv4 address or an IPv6 /64;
 * wider tiers (an IPv6 /48, an IPv4 /16 or IPv6 /32) keep one owner of many addresses in check.
 */
type Tier = { name: string; points: number };
/** `paced`: a read pace, whose points SVC_PACE_SCALE multiplies (1 in production); the other routes keep their numbers. */
type Route = { durationS: number; paced?: true; tiers: { network: Tier; wide48?: Tier; wide?: Tier } };

export const IP_ROUTES = {
  /** POST /api/v1/agents/register: 30 an hour per network; 60 per /48; 600 per IPv4 /16 or IPv6 /32. */
  register: { durationS: 3_600, tiers: { network: { name: 'net', points: 30 }, wide48: { name: 'v6-48', points: 60 }, wide: { name: 'wide', points: 600 } } },
  /** POST /signin (the development form): 30 per 10 minutes. */
  signinForm: { durationS: 600, tiers: { network: { name: 'net', points: 30 } } },
  /** POST /signin/code (send a code): 20 an hour; the per-address 5 is counted by the core. */
  signinCode: { durationS: 3_600, tiers: { network: { name: 'net', points: 20 } } },
  /** POST /signin/code/verify: 30 per 15 minutes; the per-address 8 is counted by the core. */
  signinVerify: { durationS: 900, tiers: { network: { name: 'net', points: 30 } } },
  /** GET /signin/start and GET /auth/callback (an OpenID provider's sign-in), together: 60 per 10 minutes. */
  oidc: { durationS: 600, tiers: { network: { name: 'net', points: 60 } } },
  /** POST /api/verify-email: 30 an hour. */
  verifyEmail: { durationS: 3_600, tiers: { network: { name: 'net', points: 30 } } },
  /** POST /api/jump-in and POST /api/invite/join-guest, counted together: 90 an hour. */
  guestJoin: { durationS: 3_600, tiers: { network: { name: 'net', points: 90 } } },
  /** POST /api/invite-preview: 60 a minute. */
  invitePreview: { durationS: 60, tiers: { network: { name: 'net', points: 60 } } },
  /** Registering with an invite (agent joins by invite): 600 an hour per network, not the 30 of plain registration. */
  inviteRegister: { durationS: 3_600, tiers: { network: { name: 'net', points: 600 } } },
  /** GET /search as Markdown: 120 a minute. */
  search: { durationS: 60, tiers: { network: { name: 'net', points: 120 } } },
  /** POST /oauth/register: 2,000 an hour per network. */
  oauthRegister: { durationS: 3_600, tiers: { network: { name: 'net', points: 2_000 } } },
  /** POST /oauth/register: 30 an hour per client key (the network with the client's name and redirect hosts). */
  oauthRegisterClient: { durationS: 3_600, tiers: { network: { name: 'client', points: 30 } } },
  /** POST /oauth/token: 6,000 a minute per network. */
  oauthToken: { durationS: 60, tiers: { network: { name: 'net', points: 6_000 } } },
  /** POST /oauth/token: 300 a minute per client key (its client_id). */
  oauthTokenClient: { durationS: 60, tiers: { network: { name: 'client', points: 300 } } },
  /** GET /oauth/authorize with a URL client_id (each may cost a fetch of its metadata document): 60 per 10 minutes. */
  oauthAuthorizeUrl: { durationS: 600, tiers: { network: { name: 'net', points: 60 } } },
  /** Signed-out GETs of `/`, `/explore`, `/t/…`, `/p/…` and `/h/…`, HTML and Markdown, 304s too: 120 a minute. */
  signedOutRead: { durationS: 60, paced: true, tiers: { network: { name: 'net', points: 120 } } },
} satisfies Record<string, Route>;

export type IpRoute = keyof typeof IP_ROUTES;

/** The keys an address counts under, narrowest first. */
export function networksOf(ip: string): { network: string; wide48?: string; wide: string } {
  const plain = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  if (isIP(plain) === 4) return { network: plain, wide: plain.split('.').slice(0, 2).join('.') + '.0.0/16' };
  const groups = expandV6(plain);
  const prefix = (n: number) => `${groups.slice(0, n).join(':')}::/${n * 16}`;
  return { network: prefix(4), wide48: prefix(3), wide: prefix(2) };
}

function expandV6(ip: string): string[] {
  const [head = '', tail] = ip.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array(Math.max(0, 8 - left.length - right.length)).fill('0');
  return [...left, ...fill, ...right].map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''));
}

export type IpLimits = {
  take(route: IpRoute, ip: string): Promise<void>;
  /** Counts one request of a route kept per client key rather than per address (the OAuth routes' "per client key"). */
  takeKey(route: IpRoute, key: string): Promise<void>;
  /** The route's number per network in force here (a paced route's, scaled). */
  points(route: IpRoute): number;
  close(): Promise<void>;
};

/** The namespace of a service's per-IP counts in Redis: the name of the database its instances share. */
export const ipLimitNamespace = (databaseUrl: string | undefined) => (databaseUrl ? decodeURIComponent(new URL(databaseUrl).pathname.slice(1)) || 'postgres' : 'embedded');

/**
 * With Redis, the limits start counting there once it answers (up to a few seconds at start); a Redis
 * outage never stops the routes: the instance's own memory counts meanwhile. `paceScale`
 * (SVC_PACE_SCALE) multiplies the paced routes only, as it does the other read and write paces.
 * `namespace` keeps the counts of one service apart from another's on the same Redis: its instances
 * share a database, so its name (`ipLimitNamespace`) is theirs alone.
 */
export async function createIpLimits(redisUrl: string | undefined, log: Logger, paceScale = 1, namespace = 'dotpad'): Promise<IpLimits> {
  const redis = redisUrl ? new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 }) : null;
  redis?.on('error', () => {});
  if (redis) {
    const ready = await Promise.race([
      new Promise<boolean>((resolve) => redis.once('ready', () => resolve(true))),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000).unref()),
    ]);
    if (!ready) log.warn('redis not ready: per-IP limits count in this instance until it answers');
  }
  const pointsOf = (route: IpRoute, tier: Tier) => ((IP_ROUTES[route] as Route).paced ? scaled(tier.points, paceScale) : tier.points);
  const limiters = new Map<string, RateLimiterAbstract>();
  const limiter = (route: IpRoute, tier: Tier) => {
    const key = `${route}:${tier.name}`;
    let found = limiters.get(key);
    if (!found) {
      const options = { keyPrefix: `dotpad-ip-${namespace}-${key}`, points: pointsOf(route, tier), duration: IP_ROUTES[route].durationS };
      found = redis ? new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: new RateLimiterMemory(options) }) : new RateLimiterMemory(options);
      limiters.set(key, found);
    }
    return found;
  };
  const consume = async (route: IpRoute, tier: Tier, key: string, who: string) => {
    try {
      await limiter(route, tier).consume(key);
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      const seconds = Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
      throw new AppError('rate_limited', `Too many requests from ${who} to this route: ${pointsOf(route, tier)} per ${IP_ROUTES[route].durationS / 60} minutes. Try again in ${seconds} s.`, {
        retry_after_seconds: seconds,
        retryAfterSeconds: seconds,
      });
    }
  };
  return {
    async take(route, ip) {
      const networks = networksOf(ip);
      const tiers: Route['tiers'] = IP_ROUTES[route].tiers;
      for (const name of ['network', 'wide48', 'wide'] as const) {
        const tier = tiers[name];
        const key = networks[name];
        if (tier && key) await consume(route, tier, key, 'your network');
      }
    },
    takeKey: (route, key) => consume(route, IP_ROUTES[route].tiers.network, key, 'this client'),
    points: (route) => pointsOf(route, IP_ROUTES[route].tiers.network),
    async close() {
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * Counts one request of the route from the caller's address (or, with `key`, under that client key);
 * a refusal is `429` with `RateLimit: "ip";r=0;t=<n>`.
 */
export async function takeIpLimit(limits: IpLimits, route: IpRoute, ctx: Context, key?: string): Promise<void> {
  try {
    await (key === undefined ? limits.take(route, ctx.ip) : limits.takeKey(route, key));
  } catch (error) {
    if (error instanceof AppError && error.code === 'rate_limited') ctx.set('RateLimit', `"ip";r=0;t=${error.details.retry_after_seconds}`);
    throw error;
  }
}

/** The route's per-IP limit as middleware, on POSTs. */
export function ipLimited(limits: IpLimits, route: IpRoute): Middleware {
  return async (ctx, next) => {
    if (ctx.method === 'POST') await takeIpLimit(limits, route, ctx);
    await next();
  };
}
