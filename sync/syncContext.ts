import type { Hocuspocus } from '@hocuspocus/server';
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
  /** Read-only only because its participant suggests rather than edits (a Checked hub's member). */
  suggests?: boolean;
  persisted?: boolean;
  system?: boolean;
};

/** Every live connection this instance holds, with its pad and its context. */
export function* liveConnections(instance: Hocuspocus<SyncContext>) {
  for (const document of instance.documents.values()) {
    for (const connection of document.getConnections()) {
      yield { padId: document.name, connection, context: connection.context as SyncContext | undefined };
    }
  }
}
