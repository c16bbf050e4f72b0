import { Redis } from '@hocuspocus/extension-redis';

/**
 * Hocuspocus' own Redis extension, as it is, on the server a redis:// URL names. Several instances:
 * each change is passed on to the others holding the pad, which apply it with the origin "redis" and
 * leave its persisting and versioning to the instance where it was made.
 */
export function redisExtension(url: string) {
  const parsed = new URL(url);
  return new Redis({
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    prefix: 'dotpad',
    options: {
      ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
      ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
      ...(parsed.pathname.length > 1 ? { db: Number(parsed.pathname.slice(1)) } : {}),
      ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  });
}
