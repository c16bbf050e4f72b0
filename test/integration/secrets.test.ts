import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type Running } from '../../api/app.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/log.ts';
import { codeIn, startSmtp } from '../support/mail.ts';
import { durableStore, request, rest, stores, type Reply } from '../support/server.ts';

/** Every credential prefix of the service (SPEC part 2 "Credentials"), followed by a secret's characters. */
const SECRET = /svc(?:a|s|c|o|r|v|i|code)_[A-Za-z0-9_-]{16,}/g;

/**
 * Secrets are shown once and kept only as SHA-256 hashes, and never logged: after every way a
 * credential is made or used (keys, renewals, sub-agent keys, links, invites, sign-in codes, email
 * links, sessions), neither a dump of every table nor the server's log (at debug) holds any of them.
 */
describe.each(stores())('secrets on %s', (store) => {
  let server: Running;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let drop: () => Promise<void>;
  const logLines: string[] = [];
  /** Every secret the service handed out in this test. */
  const handedOut = new Set<string>();
  const keep = (reply: Reply) => {
    for (const found of reply.text.match(SECRET) ?? []) handedOut.add(found);
    return reply;
  };

  beforeAll(async () => {
    smtp = await startSmtp();
    const database = await durableStore(store);
    drop = database.drop;
    const config = loadConfig({ PORT: '0', LOG_LEVEL: 'debug', SVC_GUEST_AGENTS: '1', SMTP_URL: smtp.url, ...database.env });
    server = await startServer(config, { host: '127.0.0.1', log: createLogger('debug', {}, (line) => void logLines.push(line)) });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    await drop?.();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    request(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc': '1', origin: server.url, ...headers }, body: JSON.stringify(body) }).then(keep);

  it('are nowhere in the database or the log after every way they are made and used', async () => {
    // A person signs in with a code received over SMTP.
    const email = `secret-${randomUUID()}@example.com`;
    const before = smtp.messages.length;
    expect((await post('/signin/code', { email })).status).toBe(200);
    const mail = await smtp.next(email, before);
    const signedIn = await post('/signin/code/verify', { email, code: codeIn(mail.text) });
    expect(signedIn.status).toBe(200);
    const cookie = signedIn.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!.split(';')[0]!;
    handedOut.add(cookie.split('=')[1]!);
    const settings = (op: string, body: unknown = {}) => post(`/api/settings/${op}`, body, { cookie });

    // Keys: an agent under Settings, another key, a renewal, a sub-agent key.
    const made = await settings('create-agent', { name: 'Keeper' });
    expect(made.status).toBe(201);
    const key = made.body.agent_key as string;
    expect((await settings('new-agent-key', { agent_id: made.body.agent.id })).status).toBe(200);
    const hub = keep(await rest(server, key, 'create_hub', { name: 'Secrets' }));
    const thread = keep(await rest(server, key, 'start_thread', { hub: hub.body.data.slug, title: 'Quiet', body: 'Nothing to see.' }));
    const minted = keep(await rest(server, key, 'mint_subagent', { thread_ids: [thread.body.data.thread_id] }));
    expect(minted.status).toBe(200);
    const renewed = keep(await rest(server, key, 'rotate_key', {}));
    expect(renewed.status).toBe(200);

    // Links: a self-registered agent's link, a fresh one, a link line.
    const registered = await post('/api/v1/agents/register', { name: 'Loner' });
    expect(registered.status).toBe(201);
    expect((await rest(server, registered.body.agent_key, 'link', { action: 'new' }).then(keep)).status).toBe(200);
    const line = await settings('link-code');
    expect((await rest(server, registered.body.agent_key, 'link', { action: 'code', line: line.body.line }).then(keep)).status).toBe(200);

    // An invite, joined by a guest; an email verification link, used.
    const invite = keep(await rest(server, key, 'invite', { to: hub.body.data.slug, uses: 2 }));
    expect(invite.status).toBe(200);
    const inviteToken = (invite.body.text as string).match(/svci_[A-Za-z0-9_-]+/)![0];
    const guest = await post('/api/invite/join-guest', { token: inviteToken, name: 'Visitor' });
    expect(guest.status).toBe(200);
    for (const set of guest.headers.getSetCookie()) handedOut.add(set.split(';')[0]!.split('=')[1]!);
    const verifyTo = `verify-${randomUUID()}@example.com`;
    const sentAt = smtp.messages.length;
    expect((await settings('verify-email', { email: verifyTo })).status).toBeLessThan(300);
    const link = (await smtp.next(verifyTo, sentAt)).text.match(/svcv_[A-Za-z0-9_-]+/)![0];
    handedOut.add(link);
    expect((await post('/api/verify-email', { token: link })).status).toBe(200);

    const secrets = [...handedOut].filter((s) => s.length >= 20);
    expect(secrets.length).toBeGreaterThanOrEqual(10);

    // A dump of every table of the store, as text.
    const tables = await server.core.db.pool.anyFirst(sql.type(z.object({ name: z.string() }))`
      SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
    let dump = '';
    for (const table of tables) {
      const rows = await server.core.db.pool.anyFirst(sql.type(z.object({ row: z.string() }))`SELECT row_to_json(t)::text AS row FROM ${sql.identifier([table])} t`);
      dump += rows.join('\n') + '\n';
    }
    expect(dump.length).toBeGreaterThan(1_000);
    expect(dump.match(SECRET) ?? []).toEqual([]);
    const log = logLines.join('\n');
    expect(log.length).toBeGreaterThan(100);
    expect(log.match(SECRET) ?? []).toEqual([]);
    for (const secret of secrets) {
      expect(dump.includes(secret), 'a secret in the database').toBe(false);
      expect(log.includes(secret), 'a secret in the log').toBe(false);
    }
    // The link line's code and the mailed sign-in code are not kept as they were either.
    expect(dump).not.toContain(line.body.code);
  });
});
