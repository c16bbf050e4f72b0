import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { request, type Reachable } from './server.ts';

export type Received = { from: string; to: string[]; subject: string; text: string };

/** A header's value, unfolded. */
function header(head: string, name: string): string {
  const match = new RegExp(`^${name}:[ \\t]*(.*(?:\\r?\\n[ \\t].*)*)`, 'im').exec(head);
  return match ? match[1]!.replace(/\r?\n[ \t]+/g, ' ').trim() : '';
}

/** A single-part text message as nodemailer writes it: 7bit, quoted-printable or base64. */
function parse(raw: string, from: string, to: string[]): Received {
  const split = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, split);
  let body = raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const encoding = header(head, 'Content-Transfer-Encoding').toLowerCase();
  if (encoding === 'quoted-printable') {
    body = Buffer.from(
      body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    ).toString('utf8');
  } else if (encoding === 'base64') {
    body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  }
  return { from, to, subject: header(head, 'Subject'), text: body.replace(/\r\n/g, '\n') };
}

/**
 * A real SMTP server in the test's process (the `smtp-server` package): the service under test sends
 * to it over TCP with SMTP_URL, exactly as to a mail provider, and every message is kept here.
 */
export async function startSmtp() {
  const messages: Received[] = [];
  const waiters: { to: string; resolve: (m: Received) => void }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const message = parse(Buffer.concat(chunks).toString('utf8'), from, to);
        messages.push(message);
        for (const waiter of [...waiters]) {
          if (to.includes(waiter.to)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(message);
          }
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    /** The next message to this address (already received ones count once: pass `after`). */
    next(to: string, after = messages.length): Promise<Received> {
      const found = messages.slice(after).find((m) => m.to.includes(to.toLowerCase()));
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ to: to.toLowerCase(), resolve }));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The 6-digit code in a sign-in mail's text. */
export function codeIn(text: string): string {
  const match = /^\s+(\d{6})\s*$/m.exec(text);
  if (!match) throw new Error(`no code in: ${text}`);
  return match[1]!;
}

/** The newest outbox message to an address, as a newcomer reads it at /dev/outbox. */
export async function fromOutbox(server: Reachable, to: string): Promise<{ subject: string; text: string }> {
  const page = await request(`${server.url}/dev/outbox`);
  if (page.status !== 200) throw new Error(`/dev/outbox answered ${page.status}`);
  const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
  for (const article of page.text.split('<article>').slice(1)) {
    const recipient = unescape(/To <strong>([^<]*)<\/strong>/.exec(article)![1]!);
    if (recipient.toLowerCase() !== to.toLowerCase()) continue;
    return { subject: unescape(/<h2>([^<]*)<\/h2>/.exec(article)![1]!), text: unescape(/<pre>([\s\S]*?)<\/pre>/.exec(article)![1]!) };
  }
  throw new Error(`no outbox message to ${to}`);
}
