import { describe, expect, it } from 'vitest';
import { mightHoldSecret, refusePossibleSecrets } from '../../server/core/limits/possibleSecrets.ts';

/**
 * Text is scanned for secrets only when it might hold one (`mightHoldSecret`): a run of twelve token
 * characters or one of a few marks. Each example here is one that the scan itself finds (so it is a
 * real positive, checked first), of every rule of secretlint's recommended preset and our own keys,
 * in its shortest form where the rule allows a short one (npm's auth line is left out: its rule reads
 * only files named .npmrc); each must pass the gate. The pieces are
 * joined at run time so that no scanner of this repository mistakes them for real keys.
 */
const j = (...parts: string[]) => parts.join('');
const run = (chars: string, n: number) => chars.repeat(Math.ceil(n / chars.length)).slice(0, n);
const pem = j('-----BEGIN RSA ', 'PRIVATE KEY-----\n', 'MIIEpAIBAAKCAQEA', run('q7Zx9Lw2', 160), '\n-----END RSA ', 'PRIVATE KEY-----');

const EXAMPLES: [string, string][] = [
  ['AWS access key id', j('key: AKIA', 'Z3MSJV4WXYZ12345')],
  ['AWS secret access key', j('aws_secret_access_key = "', 'Zx9/Qw8+Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz9Xc8Vb', '"')],
  ['AWS account id', j('aws_account_id = "', '3141-5926-5358', '"')],
  ['private key', pem],
  ['GCP service account JSON', JSON.stringify({ type: 'service_account', private_key_id: 'k1', private_key: pem })],
  ['GitHub x-oauth-basic URL', j('https://q7Zx9Lw2', ':x-oauth-basic@github.com/org/repo')],
  ['npm token', j('npm_', run('q7Zx9Lw2R4', 36))],
  ['Slack token', j('xoxb-', '1-q7Zx')],
  ['Slack webhook', j('https://hooks.slack.com/services/', 'T0Q7/B0Q7/q7Zx9Lw2')],
  ['password in a URL', j('https://alice:', 'q7Zx9Lw2', '@example.com')],
  ['OpenAI key', j('sk-', run('q7Zx9Lw2R4', 20), 'T3Blbk', 'FJ', run('R4q7Zx9Lw2', 20))],
  ['Anthropic key', j('sk-ant-', 'api03-', run('q7Zx9Lw2R4', 93), 'AA')],
  ['Groq key', j('gsk_', run('q7Zx9Lw2R4', 52))],
  ['Hugging Face token', j('hf_', run('qZxLwRabcD', 34))],
  ['Linear key', j('lin_api_', run('q7Zx9Lw2R4', 40))],
  ['Notion token', j('ntn_', '12345678901', run('q7Zx9Lw2R4', 35))],
  ['SendGrid key', j('SG.', run('q7Zx9Lw2R4', 22), '.', run('R4q7Zx9Lw2', 43))],
  ['Shopify token', j('shpat_', run('q7Zx9Lw2R4', 32))],
  ['Stripe key', j('sk_', 'live_', run('q7Zx9Lw2R4', 24))],
  ['GitHub token', j('ghp_', run('q7Zx9Lw2R4', 36))],
  ['GitHub fine-grained token', j('github_', 'pat_', run('q7Zx9Lw2R4', 82))],
  ['GitHub app token', j('ghs_', '1_a.b.c')],
  ['GitLab token', j('glpat-', run('q7Zx9Lw2R4', 20))],
  ['Grafana cloud token', j('glc_', run('q7Zx9Lw2R4', 32))],
  ['Grafana service account token', j('glsa_', run('q7Zx9Lw2R4', 32), '_', 'deadbeef')],
  ['MongoDB URI', j('mongodb://alice:', 'q7Zx9Lw2', '@db.example.com/app')],
  ['MySQL URI', j('mysql://alice:', 'q7Zx9Lw2', '@db.example.com/app')],
  ['PostgreSQL URI', j('postgres://alice:', 'q7Zx9Lw2', '@db.example.com/app')],
  ['HashiCorp Vault token', j('hvs.', run('q7Zx9Lw2R4', 95))],
  ['Vercel token', j('vcp_', run('q7Zx9Lw2R4', 24))],
  ['Databricks token', j('dapi', run('0123456789abcdef', 32))],
  ['Docker token', j('dckr_', 'pat_', run('q7Zx9Lw2R4', 27))],
  ['Figma token', j('figd_', run('q7Zx9Lw2R4', 40))],
  ['Cloudflare token', j('cfut_', run('q7Zx9Lw2R4', 40), 'deadbeef')],
  ['Tailscale key', j('tskey-', 'api-', run('q7Zx9Lw2', 8), '-', run('R4q7Zx9Lw2', 16))],
  ['Dotpad key', j('svc', 'b_', run('Ab3_x9-Q', 48))],
];

/** Whether the scan finds a secret in `text`. */
const scanned = (text: string) => refusePossibleSecrets([{ path: 'body', text: `Here: ${text} (end)` }]).then(() => false, () => true);

describe('the gate before the secrets scan', () => {
  it.each(EXAMPLES)('lets a %s through to the scan, which finds it', async (_, secret) => {
    expect(mightHoldSecret(`Here: ${secret} (end)`)).toBe(true);
    expect(await scanned(secret)).toBe(true);
  });

  it('passes ordinary sentences without a scan, and sends words, paths and links to it', () => {
    expect(mightHoldSecret('Paragraph 4 of the pad, revised for the 12th time: a sentence of ordinary length.')).toBe(false);
    expect(mightHoldSecret('Short words only; numbers like 2026 and 3.14 too.')).toBe(false);
    expect(mightHoldSecret('An internationalisation plan.')).toBe(true);
    expect(mightHoldSecret('See server/core/limits.')).toBe(true);
    expect(mightHoldSecret('At https://example.com.')).toBe(true);
  });
});
