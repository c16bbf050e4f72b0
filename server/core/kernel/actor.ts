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
  /** `agent_key`: an agent on its own key; `session`: the web app ("direct"). */
  via: 'agent_key' | 'session';
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
};
