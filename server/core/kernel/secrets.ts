import { hash, randomBytes } from 'node:crypto';

/** Credentials are 32 random bytes, base64url, behind their kind's prefix; only the SHA-256 is stored. */
export type SecretPrefix = 'svca_' | 'svcs_' | 'svcc_' | 'svco_' | 'svcr_' | 'svccode_' | 'svcv_' | 'svci_' | 'svcw_';

export function newSecret(prefix: SecretPrefix): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function hashSecret(secret: string): string {
  return sha256Hex(secret);
}

export type IdPrefix = 'hub_' | 'thr_' | 'msg_' | 'pad_' | 'ppl_' | 'agt_' | 'hum_' | 'crd_' | 'edt_' | 'inv_' | 'lnk_' | 'tsk_' | 'dec_' | 'rep_' | 'client_' | 'oag_' | 'sug_' | 'chk_';

/** Ids are a prefix and 10 random bytes in hex: unguessable, URL-safe and short enough to read. */
export function newId(prefix: IdPrefix): string {
  return prefix + randomBytes(10).toString('hex');
}

/** One-shot: no Hash object per call (every authenticated request hashes its key). */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}
