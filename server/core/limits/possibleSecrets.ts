import { lintSource } from '@secretlint/core';
import { secretLintProfiler } from '@secretlint/profiler';
import { creator as patternRule } from '@secretlint/secretlint-rule-pattern';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import { invalid } from '../../../schema/errors.ts';

/**
 * Text that looks like a credential (SPEC part 4 `confirm_sensitive`): secretlint's recommended preset
 * (the provider key shapes it keeps up to date: AWS, GitHub, Slack, OpenAI, Anthropic, Stripe, private
 * keys, connection strings with passwords, and more), with the AWS access key id check turned on (off
 * in the preset, and the shape most often pasted), and our own credentials, `svc<kind>_` and 32
 * random bytes in base64url (kernel/secrets.ts).
 */
const config: Parameters<typeof lintSource>[0]['options']['config'] = {
  rules: [
    {
      id: '@secretlint/secretlint-rule-preset-recommend',
      rule: recommended,
      rules: [{ id: '@secretlint/secretlint-rule-aws', options: { enableIDScanRule: true } }],
    },
    {
      id: '@secretlint/secretlint-rule-pattern',
      rule: patternRule,
      options: { patterns: [{ name: 'a Dotpad key', patterns: ['/\\bsvc[a-z]_[A-Za-z0-9_-]{40,}/'] }] },
    },
  ],
};

// secretlint profiles every rule of every call with performance.mark() and keeps each entry in its own
// list and in Node's performance timeline, neither of which is ever emptied: in a server that scans
// every write, that is time on each call and memory without end. Nobody here reads the profile.
secretLintProfiler.setEnabled(false);

/** A field's text to look at: `path` names it in the refusal (`body`, `edits.2.text`). */
export type TextField = { path: string; text: string };

/**
 * What a rule's message id reads as: "AWSAccessKeyID" -> "AWS Access Key ID", "GITHUB_TOKEN" ->
 * "github token"; the pattern rule's one id is our own keys.
 */
function kindOf(messageId: string): string {
  if (messageId === 'PATTERN') return 'Dotpad key';
  if (/^[A-Z0-9_]+$/.test(messageId)) return messageId.toLowerCase().replace(/_/g, ' ');
  return messageId.replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2').replace(/([a-z])([A-Z])/g, '$1 $2');
}

/**
 * Whether any rule above could find something in `text`: every one of them matches either a run of
 * at least twelve token characters (letters, digits and `_-+/=.`: a key, a 12-digit account id), or
 * text holding one of these marks (a URL with a scheme, a private key, an npm auth line, the short
 * Slack, SendGrid and GitHub app tokens, a service account's JSON, or a JSON escape that could spell
 * one). Text with neither, as most sentences are, is passed without scanning: secretlint builds its
 * rules anew on every call, a quarter of the server's work on a short pad edit. The unit test holds
 * a real example of every rule of the preset against this.
 */
const MIGHT_HOLD = /[A-Za-z0-9_\-+\/=.]{12}|:\/\/|-----BEGIN|_authToken=|xox[bpaor]-|xapp-|SG\.|ghs_|private_key|\\u/;
export const mightHoldSecret = (text: string) => MIGHT_HOLD.test(text);

/** The possible secrets in one text, each with the text it matched. */
async function findSecrets(text: string): Promise<{ kind: string; match: string }[]> {
  if (text.length < 8 || !mightHoldSecret(text)) return [];
  const result = await lintSource({
    source: { content: text, filePath: '/text.md', ext: '.md', contentType: 'text' },
    options: { config, noPhysicFilePath: true },
  });
  return result.messages.map((m) => ({ kind: kindOf(m.messageId), match: text.slice(m.range[0], m.range[1]) }));
}

/**
 * Refuses `invalid` when new text looks like it holds a secret, naming the field and the kind and
 * `confirm_sensitive: true` as the way through. `already`: the text the caller is changing (a pad's
 * current text), read only when something was found; a secret found there too is not new and does not
 * count again.
 */
export async function refusePossibleSecrets(fields: readonly TextField[], already: () => string | Promise<string> = () => ''): Promise<void> {
  const issues: { path: string; message: string }[] = [];
  let before: string | undefined;
  for (const field of fields) {
    const candidates = await findSecrets(field.text);
    if (candidates.length) before ??= await already();
    const found = candidates.filter((secret) => !before!.includes(secret.match));
    const kinds = [...new Set(found.map((secret) => secret.kind))];
    if (kinds.length) issues.push({ path: field.path, message: `Looks like it holds a secret (${kinds.join(', ')}).` });
  }
  if (!issues.length) return;
  const where = issues.map((issue) => `${issue.path} ${issue.message.charAt(0).toLowerCase()}${issue.message.slice(1, -1)}`).join('; ');
  throw invalid(
    `Not saved: ${where}. Take it out (and rotate it if it was real), or send the same call with confirm_sensitive: true if you mean to share it.`,
    { issues },
  );
}
