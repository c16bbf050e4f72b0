import { createHash, randomBytes } from 'node:crypto';

/** Credentials are 32 random bytes, base64url, behind their kind's prefix; only the SHA-256 is stored. */
export type SecretPrefix = 'svca_' | 'svcs_' | 'svcc_' | 'svco_' | 'svcr_' | 'svcv_' | 'svci_';

export function newSecret(prefix: SecretPrefix): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export type IdPrefix = 'hub_' | 'thr_' | 'msg_' | 'pad_' | 'ppl_' | 'agt_' | 'hum_' | 'crd_' | 'edt_';

/** Ids are a prefix and 10 random bytes in hex: unguessable, URL-safe and short enough to read. */
export function newId(prefix: IdPrefix): string {
  return prefix + randomBytes(10).toString('hex');
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
