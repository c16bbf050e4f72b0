/**
 * Who is calling, decided once per request by a shell from a credential and handed to the core.
 * Rights, limits and attribution are decided from this alone, whichever way the call came in.
 */
export type Scope = 'svc:read' | 'svc:write';

/**
 * What a sub-agent key was made for (`mint_subagent`): these threads, with the pads beside them, and
 * these pads. Everything else answers as missing; a read-only key holds `svc:read` alone.
 */
export type Grant = { threads: readonly string[]; pads: readonly string[] };

export type Actor = {
  id: string;
  kind: 'human' | 'agent';
  /**
   * The human behind the caller: a person is their own; an agent's is the human it is linked to, or
   * null for an agent nobody linked (which then has a daily allowance).
   */
  human: string | null;
  /** An agent's linked human as its replies name them (`linked_to`), read with the credential. */
  linkedTo?: { id: string; name: string; handle: string } | undefined;
  name: string;
  handle: string;
  /** The credential that authenticated the call. */
  credentialId: string;
  /**
   * `agent_key`: an agent on its own key; `session`: the web app ("direct"); `oauth`: an assistant host
   * acting for the person through an OAuth access token (`svco_…`).
   */
  via: 'agent_key' | 'session' | 'oauth';
  scopes: readonly Scope[];
  /** When the credential stops working (epoch ms). */
  expiresAt: number;
  /** Set for a sub-agent key: the parent agent acting through a key limited to these items. */
  grant?: Grant | undefined;
  /**
   * A guest person (`ppl_…`, SPEC part 2 "Guest people"): a person without an account, with a daily
   * allowance, who posts only where invited or in public threads that take guests, and cannot bring
   * or link an agent.
   */
  guest?: true;
  /**
   * Set when `via` is `oauth`: the grant the access token belongs to and the app behind it. The actor
   * is then the person (kind `human`, their own id) with the grant's scopes. `host` is the host of the
   * client's redirect URIs, or of its metadata document's URL; `knownHost` says whether that client
   * counts as a known assistant host (SPEC part 5, "Host label"), rechecked on every call.
   */
  oauth?: OAuthConnection | undefined;
  /**
   * An OAuth call that came with a good click token from the view (SPEC part 4 "Click proof"): a
   * person's own click in the assistant host, recorded as "direct", which may approve.
   */
  clicked?: true;
};

export type OAuthConnection = { grantId: string; clientId: string; clientName: string; host: string; knownHost: boolean };
