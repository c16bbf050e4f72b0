import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressKey, isDisposable, isVerified, reachOf, standingOf } from '../../server/core/identity/standing.ts';
import { codeIn, startSmtp } from '../support/mail.ts';
import { appTool, poke, request, signIn, startTestServer, stores, type Reachable, type TestServer } from '../support/server.ts';

/** SPEC part 5 "Email verification", part 2 "Verified and unverified accounts", part 8 limits. */

const post = (server: Reachable, path: string, body: unknown, headers: Record<string, string> = {}) =>
  request(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc': '1', origin: server.url, ...headers },
    body: JSON.stringify(body),
  });

describe('addresses', () => {
  it('compare without case or +tag, in one function', () => {
    expect(addressKey(' Ada+Work@Example.ORG ')).toBe('ada@example.org');
    expect(addressKey('ada@example.org')).toBe('ada@example.org');
    expect(addressKey('a+b+c@x.io')).toBe('a@x.io');
  });

  it('at disposable-mail domains and under them are told apart from kept ones', () => {
    expect(isDisposable('x@mailinator.com')).toBe(true);
    expect(isDisposable('x@Inbox.Mailinator.com')).toBe(true);
    expect(isDisposable('x@example.org')).toBe(false);
    expect(isDisposable('x@gmail.com')).toBe(false);
  });
});

describe.each(stores())('email verification on %s', (store) => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let server: TestServer;
  let n = 0;

  /** A person signed in with the development form: no confirmed address yet. */
  const person = (name = 'Person') => signIn(server, name, `dev-${++n}@example.test`);
  const ask = (cookie: string, email: string) => post(server, '/api/settings/verify-email', { email }, { cookie });
  const confirm = (token: string, headers: Record<string, string> = {}) => post(server, '/api/verify-email', { token }, headers);

  /** Asks for a link to the address and reads its token from the mail received over SMTP. */
  async function mailedToken(cookie: string, email: string): Promise<string> {
    const after = smtp.messages.length;
    const asked = await ask(cookie, email);
    expect(asked.status).toBe(200);
    const mail = await smtp.next(email.trim(), after);
    expect(mail.subject).toBe('Confirm your email address for Dotpad');
    return /\/verify#(svcv_[A-Za-z0-9_-]{43})$/m.exec(mail.text)![1]!;
  }

  beforeAll(async () => {
    smtp = await startSmtp();
    server = await startTestServer(store, { SMTP_URL: smtp.url });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it('confirms an address from the mailed link, once', async () => {
    const ada = await person('Ada');
    expect(await isVerified(server.core, ada.id)).toBe(false);
    const token = await mailedToken(ada.cookie, 'Ada+Dotpad@Example.org');
    expect(await server.core.db.pool.anyFirst(sql.unsafe`SELECT token_hash FROM email_verifications`)).not.toContain(token);

    const done = await confirm(token, { cookie: ada.cookie });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ verified: true, name: 'Ada', signedIn: true, merged: false, otherSession: false });
    expect(await isVerified(server.core, ada.id)).toBe(true);
    expect(await server.core.db.pool.oneFirst(sql.unsafe`SELECT email_key FROM participants WHERE id = ${ada.id}`)).toBe('ada@example.org');

    const again = await confirm(token, { cookie: ada.cookie });
    expect(again.status).toBe(404);
    expect(again.body.error).toBe('not_found');
  });

  it('answers a bad, a used and an expired token the same 404', async () => {
    const bob = await person('Bob');
    const token = await mailedToken(bob.cookie, 'bob@example.org');
    await poke(server, sql.unsafe`UPDATE email_verifications SET expires_at = now() - interval '1 second' WHERE email_key = 'bob@example.org'`);
    const expired = await confirm(token);
    const made = await confirm('svcv_' + 'x'.repeat(43));
    expect(expired.status).toBe(404);
    expect(made.status).toBe(404);
    expect(expired.body).toEqual(made.body);
    expect(await isVerified(server.core, bob.id)).toBe(false);
  });

  it('tells a signed-out browser and one signed in as someone else apart', async () => {
    const cleo = await person('Cleo');
    const dan = await person('Dan');
    const signedOut = await confirm(await mailedToken(cleo.cookie, 'cleo@example.org'));
    expect(signedOut.body).toEqual({ verified: true, name: 'Cleo', signedIn: false, merged: false, otherSession: false });
    const other = await confirm(await mailedToken(dan.cookie, 'dan@example.org'), { cookie: cleo.cookie });
    expect(other.body).toEqual({ verified: true, name: 'Dan', signedIn: false, merged: false, otherSession: true });
  });

  it('needs x-svc: 1 and our origin', async () => {
    const bare = await request(`${server.url}/api/verify-email`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token":"svcv_x"}' });
    expect(bare.status).toBe(403);
    const crossSite = await post(server, '/api/verify-email', { token: 'svcv_x' }, { origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
  });

  it('refuses disposable-mail domains and sends nothing', async () => {
    const eve = await person('Eve');
    const before = smtp.messages.length;
    for (const email of ['eve@mailinator.com', 'eve@inbox.mailinator.com']) {
      const reply = await ask(eve.cookie, email);
      expect(reply.status).toBe(400);
      expect(reply.body.message).toMatch(/disposable/);
    }
    expect(smtp.messages.length).toBe(before);
  });

  it('sends 3 links an hour per id', async () => {
    const fay = await person('Fay');
    for (let i = 0; i < 3; i++) expect((await ask(fay.cookie, `fay${i}@example.org`)).status).toBe(200);
    const fourth = await ask(fay.cookie, 'fay3@example.org');
    expect(fourth.status).toBe(429);
    expect(fourth.body.error).toBe('rate_limited');
    expect(fourth.body.message).toMatch(/3 verification mails an hour/);
  });

  it('sends 5 links a day to one address, counted without case or +tag', async () => {
    const [gus, hal] = [await person('Gus'), await person('Hal')];
    for (let i = 0; i < 3; i++) expect((await ask(gus.cookie, `Cap+${i}@example.org`)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await ask(hal.cookie, `cap+h${i}@EXAMPLE.org`)).status).toBe(200);
    const sixth = await ask(hal.cookie, 'cap@example.org');
    expect(sixth.status).toBe(429);
    expect(sixth.body.message).toMatch(/5 verification mails a day/);
  });

  it('verifies at most 5 ids with one address', async () => {
    for (let i = 0; i < 5; i++) {
      const member = await person(`Crowd ${i}`);
      await poke(server, sql.unsafe`UPDATE participants SET email_key = 'crowd@example.org', email_verified_at = now() WHERE id = ${member.id}`);
    }
    const sixth = await person('Crowd 5');
    const refused = await ask(sixth.cookie, 'Crowd+6@example.org');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/At most 5 accounts/);
  });

  it("will not give one person another's address, compared without case or +tag", async () => {
    const after = smtp.messages.length;
    expect((await post(server, '/signin/code', { email: 'ivy@example.org' })).status).toBe(200);
    const signedIn = await post(server, '/signin/code/verify', { email: 'ivy@example.org', code: codeIn((await smtp.next('ivy@example.org', after)).text) });
    expect(signedIn.status).toBe(200);
    const jay = await person('Jay');
    const taken = await confirm(await mailedToken(jay.cookie, 'IVY+jay@Example.org'));
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe('conflict');
    expect(await isVerified(server.core, jay.id)).toBe(false);
  });

  it('reads verified (reach) only for a verified account a day old or with 10 posts; agents by their human', async () => {
    const kim = await person('Kim');
    await confirm(await mailedToken(kim.cookie, 'kim@example.org'));
    const made = await post(server, '/api/settings/create-agent', { name: 'Kim bot' }, { cookie: kim.cookie });
    expect(made.status).toBe(201);
    const agent = made.body.agent.id as string;
    const lone = await person('Lone');

    let standing = await standingOf(server.core, [kim.id, agent, lone.id]);
    expect(standing.get(kim.id)).toEqual({ verified: true, reach: 'unverified' });
    expect(standing.get(agent)).toEqual({ verified: true, reach: 'unverified' });
    expect(standing.get(lone.id)).toEqual({ verified: false, reach: 'unverified' });

    await poke(server, sql.unsafe`UPDATE participants SET created_at = now() - interval '2 days' WHERE id IN (${kim.id}, ${lone.id})`);
    standing = await standingOf(server.core, [kim.id, agent, lone.id]);
    expect(standing.get(kim.id)).toEqual({ verified: true, reach: 'verified' });
    expect(standing.get(lone.id)).toEqual({ verified: false, reach: 'unverified' });
    expect(await reachOf(server.core, agent)).toBe('unverified');
  });
});

describe.each(stores())('POST /api/verify-email per IP on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store);
  });
  afterAll(() => server?.close());

  it('takes 30 an hour, then 429 with the RateLimit header', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await post(server, '/api/verify-email', { token: `svcv_${i}` })).status);
    expect(statuses.slice(0, 30)).toEqual(new Array(30).fill(404));
    const last = await post(server, '/api/verify-email', { token: 'svcv_last' });
    expect(last.status).toBe(429);
    expect(last.headers.get('ratelimit')).toMatch(/^"ip";r=0;t=\d+$/);
  });
});

describe.each(stores())('guests confirming an address and signing in on %s', (store) => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let server: TestServer;
  let thread: string;

  const cookieOf = (reply: { headers: Headers }) => reply.headers.getSetCookie().find((c) => c.startsWith('svc_session='))?.split(';')[0];
  /** A guest who jumped into the public thread and posted there. */
  async function guest(name: string) {
    const jumped = await post(server, '/api/jump-in', { thread, name });
    expect(jumped.status, jumped.text).toBe(201);
    const cookie = cookieOf(jumped)!;
    expect((await appTool(server, cookie, 'post_reply', { thread_id: thread, body: `${name} was here.` })).status).toBe(200);
    return { id: jumped.body.participant.id as string, cookie };
  }
  async function linkFor(cookie: string, email: string) {
    const after = smtp.messages.length;
    expect((await post(server, '/api/settings/verify-email', { email }, { cookie })).status).toBe(200);
    return /\/verify#(svcv_[A-Za-z0-9_-]{43})$/m.exec((await smtp.next(email, after)).text)![1]!;
  }
  const postsBy = (id: string) => server.core.db.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM posts WHERE author_id = ${id}`);

  beforeAll(async () => {
    smtp = await startSmtp();
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1', SMTP_URL: smtp.url });
    const owner = await signIn(server, 'Owner', 'owner@example.test');
    const hub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Square' })).body.data;
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`);
    thread = (await appTool(server, owner.cookie, 'start_thread', { hub: hub.slug, title: 'Open', body: 'Hi.' })).body.data.thread_id;
    expect((await appTool(server, owner.cookie, 'ui_thread_guests', { thread_id: thread, accepts_guests: true })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it('verifies a guest whose address has no account, signing the browser in as the guest', async () => {
    const robin = await guest('Robin');
    const token = await linkFor(robin.cookie, 'robin@example.org');
    const done = await post(server, '/api/verify-email', { token });
    expect(done.body).toEqual({ verified: true, name: 'Robin', signedIn: true, merged: false, otherSession: false });
    const cookie = cookieOf(done)!;
    expect((await request(`${server.url}/api/me`, { headers: { cookie } })).body.participant.id).toBe(robin.id);
    expect(await isVerified(server.core, robin.id)).toBe(true);
  });

  it("folds a guest into the account that has the address, and signs the browser in as that account", async () => {
    const account = await signIn(server, 'Sam', 'sam@example.org');
    const sam = await guest('Sam as guest');
    const token = await linkFor(sam.cookie, 'Sam+guest@example.org');
    const done = await post(server, '/api/verify-email', { token }, { cookie: sam.cookie });
    expect(done.body).toEqual({ verified: true, name: 'Sam', signedIn: true, merged: true, otherSession: false });
    expect((await request(`${server.url}/api/me`, { headers: { cookie: cookieOf(done)! } })).body.participant.id).toBe(account.id);
    expect(await postsBy(sam.id)).toBe(0);
    expect(await postsBy(account.id)).toBe(1);
    expect((await request(`${server.url}/api/me`, { headers: { cookie: sam.cookie } })).status).toBe(401);
  });

  it('folds the guest this browser was into the account it signs into with a code, and rotates the session', async () => {
    const tess = await guest('Tess');
    const after = smtp.messages.length;
    expect((await post(server, '/signin/code', { email: 'tess@example.org' }, { cookie: tess.cookie })).status).toBe(200);
    const code = codeIn((await smtp.next('tess@example.org', after)).text);
    const signedIn = await post(server, '/signin/code/verify', { email: 'tess@example.org', code }, { cookie: tess.cookie });
    expect(signedIn.status).toBe(200);
    const account = signedIn.body.participant.id as string;
    expect(account).not.toBe(tess.id);
    expect(await postsBy(tess.id)).toBe(0);
    expect(await postsBy(account)).toBe(1);
    expect((await request(`${server.url}/api/me`, { headers: { cookie: tess.cookie } })).status).toBe(401);
    expect((await request(`${server.url}/api/me`, { headers: { cookie: cookieOf(signedIn)! } })).body.participant.id).toBe(account);
  });
});
