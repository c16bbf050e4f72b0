import nodemailer, { type Transporter } from 'nodemailer';
import { sql } from 'slonik';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { Core } from '../kernel/context.ts';
import { AppError } from '../../../schema/errors.ts';

export type Mail = { to: string; subject: string; text: string };

/** Where a message went: out through SMTP, or kept in the outbox table (no SMTP_URL). */
export type Delivery = 'smtp' | 'outbox';

/** One transport per configuration, made at the first message (nodemailer connects per message). */
const transports = new WeakMap<Config, Transporter>();

function transportFor(config: Config, smtpUrl: string): Transporter {
  let transport = transports.get(config);
  if (!transport) {
    transport = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
    transports.set(config, transport);
  }
  return transport;
}

const fromOf = (config: Config) => config.mailFrom ?? `Dotpad <no-reply@${new URL(config.baseUrl).hostname}>`;

/**
 * Sends one message. Nothing of it is logged: sign-in codes and verification links are secrets. A
 * mail server that refuses is `busy` (the code or link made for it stays unused and expires).
 */
export async function sendMail(core: Core, mail: Mail): Promise<Delivery> {
  const { config } = core;
  if (config.smtpUrl !== undefined) {
    try {
      await transportFor(config, config.smtpUrl).sendMail({ from: fromOf(config), to: mail.to, subject: mail.subject, text: mail.text });
    } catch (error) {
      // The mail server's own answer, without the message (nodemailer never puts the body in it).
      core.log.warn('mail not sent', { reason: (error as { code?: string }).code ?? 'unknown' });
      throw new AppError('busy', 'The mail server did not take the message. Try again in a minute.', { retry_after_seconds: 60, retryAfterSeconds: 60 });
    }
    return 'smtp';
  }
  // Kept a day: codes live an hour and links a day, so older mail only holds dead secrets.
  await core.db.write(async (tx) => {
    await tx.query(sql.unsafe`DELETE FROM outbox WHERE created_at < now() - interval '1 day'`);
    await tx.query(sql.unsafe`INSERT INTO outbox (to_address, subject, body) VALUES (${mail.to}, ${mail.subject}, ${mail.text})`);
  });
  return 'outbox';
}

/** What a caller is told about delivery, the same whoever the address belongs to. */
export function deliveryNote(core: Core, delivery: Delivery): string {
  if (delivery === 'smtp') return 'Check your inbox (and the spam folder).';
  return core.config.production
    ? 'Email is not connected on this server: the message was kept locally instead of sent. Ask its operator.'
    : `Email is not connected on this server (no SMTP_URL): the message was kept locally; read it at ${core.config.baseUrl}/dev/outbox.`;
}

const OutboxRow = z.object({ id: z.number(), to_address: z.string(), subject: z.string(), body: z.string(), created_at: z.number() });
export type OutboxMessage = z.infer<typeof OutboxRow>;

/** The newest kept messages, for /dev/outbox (development only). */
export async function newestOutbox(core: Core, limit = 50): Promise<readonly OutboxMessage[]> {
  return core.db.pool.any(sql.type(OutboxRow)`
    SELECT id::int AS id, to_address, subject, body, created_at FROM outbox
    ORDER BY id DESC LIMIT ${limit}`);
}
