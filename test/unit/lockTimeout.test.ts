import { describe, expect, it } from 'vitest';
import { withLockTimeout } from '../../server/db/database.ts';

/** Every Postgres session of the pool starts with lock_timeout at the write bound, beside what the URL sets. */
describe('withLockTimeout', () => {
  it('adds the lock bound as a connection option', () => {
    const url = new URL(withLockTimeout('postgres://app:secret@db.example:5432/dotpad', 2_000));
    expect(url.searchParams.get('options')).toBe('-c lock_timeout=2000');
    expect(`${url.username}:${url.password}@${url.host}${url.pathname}`).toBe('app:secret@db.example:5432/dotpad');
  });

  it('keeps the options and parameters the URL already has', () => {
    const url = new URL(withLockTimeout('postgresql://app@db.example/dotpad?sslmode=require&options=-c%20search_path%3Dapp', 500));
    expect(url.searchParams.get('sslmode')).toBe('require');
    expect(url.searchParams.get('options')).toBe('-c search_path=app -c lock_timeout=500');
  });
});
