import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startTestServer, stores, type TestServer } from '../support/server.ts';

const CRON_SECRET = 'cron-secret-for-the-tests-0123456789';

/** Scheduled work behind `Authorization: Bearer <CRON_SECRET>`: the timed rules (what prune does: rulebook.test.ts) and the pad flush. */
describe.each(stores())('scheduled work on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store, { CRON_SECRET });
  });
  afterAll(() => server?.close());

  const get = (path: string, secret?: string) => request(`${server.url}${path}`, secret ? { headers: { authorization: `Bearer ${secret}` } } : {});

  it('answers 401 without the secret or with another', async () => {
    for (const path of ['/internal/prune', '/internal/flush']) {
      for (const secret of [undefined, 'wrong-secret-of-the-same-length-0123']) {
        const reply = await get(path, secret);
        expect(reply.status, `${path} ${secret ?? 'none'}`).toBe(401);
        expect(reply.body.error).toBe('unauthenticated');
      }
    }
  });

  it('flush writes what live pads hold', async () => {
    const reply = await get('/internal/flush', CRON_SECRET);
    expect([reply.status, reply.body]).toEqual([200, { flushed: true }]);
  });
});
