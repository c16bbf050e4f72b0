import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isVerified } from '../../server/core/identity/standing.ts';
import { codeIn, fromOutbox, startSmtp } from '../support/mail.ts';
import { rawRequest, request, signIn, startTestServer, stores, type Reachable, type TestServer } from '../support/server.ts';

/** SPEC part 5 "Web sign-in": a 6-digit code by mail, its limits, sessions that rotate, sign-out. */

const post = (server: Reachable, path: string, body: unknown, headers: Record<string, string> = {}) =>
  request(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc': '1', origin: server.url, ...headers },
    body: JSON.stringify(body),
  });
const sendCode = (server: Reachable, email: string) => post(server, '/signin/code', { email });
const checkCode = (server: Reachable, email: string, code: string, headers: Record<string, string> = {}) =>
  post(server, '/signin/code/verify', { email, code }, headers);
const sessionOf = (reply: { headers: Headers }) => reply.headers.getSetCookie().find((c) => c.startsWith('svc_session='))?.split(';')[0];
const me = (server: Reachable, cookie: string) => request(`${server.url}/api/me`, { headers: { cookie } });
/** A six-digit code other than this one. */
const otherThan = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

describe.each(stores())('sign-in by emailed code on %s', (store) => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let server: TestServer;

  /** Sends a code to the address and reads it from the mail the SMTP server received. */
  async function mailedCode(email: string): Promise<string> {
    const after = smtp.messages.length;
    const sent = await sendCode(server, email);
    expect(sent.status).toBe(200);
    return codeIn((await smtp.next(email, after)).text);
  }

  beforeAll(async () => {
    smtp = await startSmtp();
    server = await startTestServer(store, { SMTP_URL: smtp.url, MAIL_FROM: 'Dotpad tests <dotpad@example.test>' });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it('signs a new person in with the code received over SMTP, verified, with a fresh session', async () => {
    const after = smtp.messages.length;
    const sent = await sendCode(server, 'Ada@Example.test');
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ sent: true, delivery: 'smtp', expires_in_seconds: 3600, next: '/signin/code' });
    const mail = await smtp.next('ada@example.test', after);
    expect(mail.from).toBe('dotpad@example.test');
    expect(mail.subject).toBe('Your Dotpad sign-in code');
    const code = codeIn(mail.text);
    expect(code).toMatch(/^\d{6}$/);
    // Only a hash of the code is kept.
    const stored = await server.core.db.pool.anyFirst(sql.unsafe`SELECT code_hash FROM signin_codes`);
    expect(stored.join(' ')).not.toContain(code);

    const checked = await checkCode(server, 'ada@example.test', code);
    expect(checked.status).toBe(200);
    expect(checked.body.participant).toMatchObject({ kind: 'human', name: 'Ada', handle: '@ada' });
    const cookie = sessionOf(checked)!;
    expect(cookie).toMatch(/^svc_session=svcs_/);
    expect((await me(server, cookie)).body.participant.id).toBe(checked.body.participant.id);
    expect(await isVerified(server.core, checked.body.participant.id)).toBe(true);

    // The same address later, in other case and with a +tag, is the same person.
    const again = await checkCode(server, 'ada+work@example.test', await mailedCode('ADA+work@example.test'));
    expect(again.status).toBe(200);
    expect(again.body.participant.id).toBe(checked.body.participant.id);
  });

  it('takes a code once, and only the newest one', async () => {
    const first = await mailedCode('reuse@example.test');
    const second = await mailedCode('reuse@example.test');
    const older = await checkCode(server, 'reuse@example.test', first);
    expect(older.status).toBe(400);
    expect(older.body.error).toBe('invalid');
    expect((await checkCode(server, 'reuse@example.test', second)).status).toBe(200);
    const reused = await checkCode(server, 'reuse@example.test', second);
    expect(reused.status).toBe(400);
    expect(reused.body).toEqual(older.body);
    expect(sessionOf(reused)).toBeUndefined();
  });

  it('refuses a wrong code and an expired one alike', async () => {
    const code = await mailedCode('late@example.test');
    const wrong = await checkCode(server, 'late@example.test', otherThan(code));
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toMatch(/not right, or it was used or has expired/);
    await server.core.db.writeStatement((c) => c.query(sql.unsafe`UPDATE signin_codes SET expires_at = now() - interval '1 second' WHERE email_key = 'late@example.test'`));
    const expired = await checkCode(server, 'late@example.test', code);
    expect(expired.status).toBe(400);
    expect(expired.body).toEqual(wrong.body);
    expect(await server.core.db.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM participants WHERE email_key = 'late@example.test'`)).toBe(0);
  });

  it('answers a known and an unknown address the same', async () => {
    await checkCode(server, 'known@example.test', await mailedCode('known@example.test'));
    const known = await sendCode(server, 'known@example.test');
    const unknown = await sendCode(server, 'nobody-yet@example.test');
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(known.status);
    expect(unknown.body).toEqual(known.body);
    const knownWrong = await checkCode(server, 'known@example.test', 'abcdef');
    const unknownWrong = await checkCode(server, 'never-sent@example.test', 'abcdef');
    expect(knownWrong.status).toBe(400);
    expect(unknownWrong.status).toBe(knownWrong.status);
    expect(unknownWrong.body).toEqual(knownWrong.body);
  });

  it('refuses disposable-mail domains before sending anything', async () => {
    const before = smtp.messages.length;
    const reply = await sendCode(server, 'someone@mailinator.com');
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/disposable/);
    expect(smtp.messages.length).toBe(before);
  });

  it('sends at most 5 codes an hour to one address, counted without case or +tag', async () => {
    for (let i = 0; i < 5; i++) expect((await sendCode(server, `busy+${i}@Example.test`)).status).toBe(200);
    const sixth = await sendCode(server, 'BUSY@example.test');
    expect(sixth.status).toBe(429);
    expect(sixth.body.error).toBe('rate_limited');
    expect(sixth.body.retry_after_seconds).toBeGreaterThan(3000);
  });

  it('takes at most 8 tries per 15 minutes for one address, then not even the right code', async () => {
    const code = await mailedCode('guessed@example.test');
    for (let i = 0; i < 8; i++) expect((await checkCode(server, 'guessed@example.test', otherThan(code))).status).toBe(400);
    const ninth = await checkCode(server, 'Guessed+x@example.test', code);
    expect(ninth.status).toBe(429);
    expect(ninth.body.error).toBe('rate_limited');
    expect(sessionOf(ninth)).toBeUndefined();
  });

  it('rotates the session at sign-in and ends it at sign-out', async () => {
    const first = await checkCode(server, 'rotate@example.test', await mailedCode('rotate@example.test'));
    const old = sessionOf(first)!;
    const second = await checkCode(server, 'rotate@example.test', await mailedCode('rotate@example.test'), { cookie: old });
    const fresh = sessionOf(second)!;
    expect(fresh).not.toBe(old);
    expect((await me(server, old)).status).toBe(401);
    expect((await me(server, fresh)).status).toBe(200);
    const out = await post(server, '/signout', {}, { cookie: fresh });
    expect(out.status).toBe(204);
    expect((await me(server, fresh)).status).toBe(401);
  });

  it('refuses code requests from another site', async () => {
    const reply = await post(server, '/signin/code', { email: 'csrf@example.test' }, { origin: 'https://evil.example' });
    expect(reply.status).toBe(403);
    expect(await server.core.db.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM signin_codes WHERE email_key = 'csrf@example.test'`)).toBe(0);
  });
});

describe.each(stores())('without SMTP_URL on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store);
  });
  afterAll(() => server?.close());

  it('keeps the mail in the outbox, shown at /dev/outbox, and the code signs in from there', async () => {
    const sent = await sendCode(server, 'newcomer@example.test');
    expect(sent.status).toBe(200);
    expect(sent.body.delivery).toBe('outbox');
    expect(sent.body.message).toContain('/dev/outbox');
    const options = await request(`${server.url}/api/signin-options`);
    expect(options.body).toMatchObject({ code: true, development_form: true, delivery: 'outbox', outbox_url: '/dev/outbox' });
    const mail = await fromOutbox(server, 'newcomer@example.test');
    expect(mail.subject).toBe('Your Dotpad sign-in code');
    const checked = await checkCode(server, 'newcomer@example.test', codeIn(mail.text));
    expect(checked.status).toBe(200);
    expect(checked.body.participant.name).toBe('newcomer');
  });

  it('counts code requests per IP: 20 an hour, then 429 with the RateLimit header', async () => {
    let reply = await sendCode(server, 'ip-0@example.test');
    for (let i = 1; reply.status === 200 && i < 30; i++) reply = await sendCode(server, `ip-${i}@example.test`);
    expect(reply.status).toBe(429);
    expect(reply.headers.get('ratelimit')).toMatch(/^"ip";r=0;t=\d+$/);
    expect(await server.core.db.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM signin_codes`)).toBe(20);
  });

  it('rotates the development sign-in session too', async () => {
    const first = await signIn(server, 'Dev', 'dev@example.test');
    const second = await request(`${server.url}/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc': '1', cookie: first.cookie },
      body: JSON.stringify({ name: 'Dev', email: 'dev@example.test' }),
    });
    expect(second.status).toBe(200);
    expect((await me(server, first.cookie)).status).toBe(401);
    expect(await isVerified(server.core, first.id)).toBe(false);
  });
});

describe.each(stores())('in production on %s', (store) => {
  let production: TestServer;
  const HOST = 'dotpad.test';
  beforeAll(async () => {
    production = await startTestServer(store, { NODE_ENV: 'production', SVC_BASE_URL: `http://${HOST}` });
  });
  afterAll(() => production?.close());

  it('has no /dev/outbox, and says the mail was kept rather than sent', async () => {
    const sent = await rawRequest(`${production.url}/signin/code`, {
      method: 'POST',
      headers: { host: HOST, 'content-type': 'application/json', 'x-svc': '1' },
      body: JSON.stringify({ email: 'ops@example.test' }),
    });
    expect(sent.status).toBe(200);
    expect(sent.body.message).toMatch(/kept locally instead of sent/);
    expect(sent.body.message).not.toContain('/dev/outbox');
    const outbox = await rawRequest(`${production.url}/dev/outbox`, { headers: { host: HOST, accept: 'text/html' } });
    expect(outbox.status).toBe(404);
    expect(JSON.stringify(outbox.body)).not.toContain('ops@example.test');
    const options = await rawRequest(`${production.url}/api/signin-options`, { headers: { host: HOST } });
    expect(options.body).toEqual({ code: true, oidc: false, development_form: false, delivery: 'outbox' });
  });
});
