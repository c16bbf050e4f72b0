import { availableParallelism } from 'node:os';
import { z } from 'zod';

const flag = z
  .enum(['1', '0', 'true', 'false', ''])
  .optional()
  .transform((value) => value === '1' || value === 'true');

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  WORKERS: z.coerce.number().int().min(1).max(256).optional(),
  SVC_BASE_URL: z.url().optional(),
  DATABASE_URL: z.string().min(1).optional(),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  SVC_DATA_DIR: z.string().min(1).default('./data'),
  SVC_PUBLIC_THREADS: flag,
  SVC_GUEST_AGENTS: flag,
  SVC_FRONT_HUB: z.string().trim().min(1).max(100).optional(),
  CRON_SECRET: z.string().min(16).optional(),
  SVC_WRITE_WAIT_MS: z.coerce.number().int().min(50).max(30_000).default(2_000),
  SVC_PACE_SCALE: z.coerce.number().positive().max(10_000).default(1),
  SVC_TESTER_CODE: z.string().min(8).optional(),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  MAIL_FROM: z.string().min(3).max(200).optional(),
  SVC_OIDC_ISSUER: z.url().optional(),
  SVC_OIDC_CLIENT_ID: z.string().min(1).optional(),
  SVC_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  SVC_MODERATORS: z
    .string()
    .optional()
    .transform((value) => (value ?? '').split(/[\s,]+/).filter(Boolean))
    .pipe(z.array(z.email({ message: 'a comma-separated list of email addresses' }).max(254))),
  SVC_VERIFIED_CLIENTS: z
    .string()
    .optional()
    .transform((value) => (value ?? '').split(/[\s,]+/).filter(Boolean)),
  SVC_TEST_CLIENT_METADATA_ORIGINS: z
    .string()
    .optional()
    .transform((value) => (value ?? '').split(/[\s,]+/).filter(Boolean))
    .pipe(z.array(z.url())),
  SVC_HOST_APPROVALS: z
    .enum(['on', 'off', '1', '0', 'true', 'false', ''])
    .optional()
    .transform((value) => !['off', '0', 'false'].includes(value ?? '')),
  SVC_WIDGET_DOMAIN: z.string().min(1).max(253).optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  NODE_ENV: z.string().default('development'),
});

export type Config = {
  port: number;
  /**
   * Processes `npm start` runs on the port (node:cluster): WORKERS, by default every core when
   * DATABASE_URL and REDIS_URL are set (instances share Postgres and live pads through Redis), else 1.
   */
  workers: number;
  /** Canonical origin, without a trailing slash. Filled from the listening port when PORT is 0. */
  baseUrl: string;
  /** True when SVC_BASE_URL was given explicitly. */
  baseUrlFixed: boolean;
  databaseUrl: string | undefined;
  /** With several instances: Redis carries live pad edits between them. */
  redisUrl: string | undefined;
  /** PGlite data directory, or 'memory://' for a throwaway in-memory store. */
  dataDir: string;
  publicThreads: boolean;
  guestAgents: boolean;
  /** The hub the home page puts in front (a slug); shown only while it is published. */
  frontHub: string | undefined;
  cronSecret: string | undefined;
  /** How long a tool's write waits for a database connection before it is turned away as `busy`. */
  writeWaitMs: number;
  /** Multiplies every write pace number of SPEC part 8 (1 in production; test servers loosen it, never turn it off). */
  paceScale: number;
  /** Lets testers use the development sign-in on a server that is not on their own machine. */
  testerCode: string | undefined;
  /** `smtp://` or `smtps://`: mail goes out through it; unset, it is kept in the outbox table. */
  smtpUrl: string | undefined;
  /** The From of our mail; unset, `Dotpad <no-reply@<host of the base URL>>`. */
  mailFrom: string | undefined;
  /** Sign-in through an OpenID provider (authorization code with PKCE) when set. */
  oidc: { issuer: string; clientId: string; clientSecret: string | undefined } | undefined;
  /**
   * The platform moderators' email addresses: a person signed in with one of them, confirmed, may
   * suspend accounts and pause guests (the settings operations `suspend` and `guest-pause`).
   */
  moderators: readonly string[];
  /**
   * OAuth clients this deployment vouches for (SVC_VERIFIED_CLIENTS): registered ids (`client_…`) or
   * metadata document URLs, which count as known assistant hosts beside the built-in ones.
   */
  verifiedClients: readonly string[];
  /**
   * TESTS ONLY (SVC_TEST_CLIENT_METADATA_ORIGINS): origins whose client metadata documents may be
   * fetched over http and from loopback or private addresses, which the SSRF guard refuses otherwise.
   * Refused in production.
   */
  testClientMetadataOrigins: readonly string[];
  /**
   * Approvals clicked in an assistant host's view (SPEC part 4 "Click proof"): on by default; off,
   * approvals inside a host are refused, an assistant's `edit_pad` too, and its decisions stay proposed.
   */
  hostApprovals: boolean;
  /** `_meta.ui.domain` of the MCP Apps view, the host's dedicated origin for it; unset, the host picks. */
  widgetDomain: string | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  production: boolean;
};

/** Parses the environment once at boot; a bad value stops the server with a message naming it. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Bad configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  if (e.NODE_ENV === 'production' && e.SVC_TEST_CLIENT_METADATA_ORIGINS.length) {
    throw new Error('Bad configuration: SVC_TEST_CLIENT_METADATA_ORIGINS: for tests only, refused in production');
  }
  if (e.SVC_OIDC_ISSUER && !e.SVC_OIDC_CLIENT_ID) throw new Error('Bad configuration: SVC_OIDC_CLIENT_ID: needed with SVC_OIDC_ISSUER');
  const shared = e.DATABASE_URL !== undefined && e.REDIS_URL !== undefined;
  const workers = e.WORKERS ?? (shared ? availableParallelism() : 1);
  if (workers > 1 && e.DATABASE_URL === undefined) {
    throw new Error(
      `Bad configuration: WORKERS: ${workers} processes need DATABASE_URL (Postgres) and REDIS_URL; the embedded store is one process's own. Unset WORKERS, or set both.`,
    );
  }
  if (workers > 1 && e.REDIS_URL === undefined) {
    throw new Error(`Bad configuration: WORKERS: ${workers} processes need REDIS_URL, through which they share live pads. Set it, or unset WORKERS.`);
  }
  return {
    port: e.PORT,
    workers,
    baseUrl: (e.SVC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    baseUrlFixed: e.SVC_BASE_URL !== undefined,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    dataDir: e.SVC_DATA_DIR,
    publicThreads: e.SVC_PUBLIC_THREADS,
    guestAgents: e.SVC_GUEST_AGENTS,
    frontHub: e.SVC_FRONT_HUB,
    cronSecret: e.CRON_SECRET,
    writeWaitMs: e.SVC_WRITE_WAIT_MS,
    paceScale: e.SVC_PACE_SCALE,
    testerCode: e.SVC_TESTER_CODE,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    oidc: e.SVC_OIDC_ISSUER ? { issuer: e.SVC_OIDC_ISSUER, clientId: e.SVC_OIDC_CLIENT_ID!, clientSecret: e.SVC_OIDC_CLIENT_SECRET } : undefined,
    moderators: e.SVC_MODERATORS,
    verifiedClients: e.SVC_VERIFIED_CLIENTS,
    testClientMetadataOrigins: e.SVC_TEST_CLIENT_METADATA_ORIGINS.map((origin) => new URL(origin).origin),
    hostApprovals: e.SVC_HOST_APPROVALS,
    widgetDomain: e.SVC_WIDGET_DOMAIN,
    logLevel: e.LOG_LEVEL,
    production: e.NODE_ENV === 'production',
  };
}
