import type { Author } from './versions.ts';

/**
 * What travels with a live connection or a server-side change, as Hocuspocus' context: who makes it
 * (attribution), the credential it was opened with (re-checked while it stays open), and whether the
 * change was already stored by whoever made it, so persistence does not append it twice.
 */
export type SyncContext = {
  author?: Author;
  participantId?: string | null;
  credentialId?: string | null;
  persisted?: boolean;
  system?: boolean;
};
