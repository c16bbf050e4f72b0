import type { CommonQueryMethods, DatabaseTransactionConnection } from 'slonik';
import type { z } from 'zod';
import type { Actor } from '../../server/core/kernel/actor.ts';
import type { Core } from '../../server/core/kernel/context.ts';
import type { PlannedWrite } from '../../server/db/plannedWrite.ts';
import type { Limit } from '../../server/core/limits/limits.ts';
import type { Policy } from '../../server/core/kernel/policy.ts';
import type { Result } from '../../server/core/kernel/result.ts';
import { errorStatus, type ErrorCode } from '../../schema/errors.ts';
import { confirmSensitive, idempotencyKey } from '../../schema/tools/fields.ts';

/**
 * A tool's kind as the Kind column of SPEC part 4's tool tables writes it. Each tool declares it
 * once, and its MCP annotations, its `read_only` on REST and its `x-read-only` in OpenAPI all follow
 * from it (`annotationsOf`).
 */
export type ReadKind = 'read' | 'read, open world' | 'read, idempotent';
export type WriteKind = 'write' | 'write, idempotent' | 'destructive';
export type Kind = ReadKind | WriteKind;

/** MCP tool annotations (SPEC part 4 "Annotations"). */
export type Annotations = {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  openWorldHint: boolean;
  idempotentHint?: boolean;
};

/** `signal` aborts when the caller went away (its connection closed): a long read stops waiting then. */
export type ReadContext = { core: Core; actor: Actor; conn: CommonQueryMethods; signal?: AbortSignal | undefined };
/** A write runs inside the one transaction the pipeline opened; its own writes go through `tx`. */
export type WriteContext = { core: Core; actor: Actor; tx: DatabaseTransactionConnection };
/**
 * A write the core commits itself (a live pad's version, once the change is in the live document):
 * it opens the transaction and commits `write` in it with what it will answer, so the pipeline's
 * count and idempotency record commit with it. Not committing `write` means nothing was written.
 * `write` is left out when the pipeline has nothing to write beside the change (no key, no allowance
 * to count), so the pad layer can commit its version in one statement, without a transaction's round trips.
 */
export type LiveContext<O> = { core: Core; actor: Actor; write: PlannedWrite<O> | undefined };
/**
 * A write whose core call opens and commits its own transaction, because what it does goes on past
 * the commit (revoked credentials' live connections closing, mail going out). The pipeline opens none
 * for it, so such a tool passes no limits and takes no idempotency key.
 */
export type CoreContext = { core: Core; actor: Actor; write: PlannedWrite<unknown> | undefined };

/**
 * Where a tool is served. `model`: MCP, REST and the web app; `app`: the web app's `/api/tools/:name`
 * only; `settings`: the web app's `/api/settings/:op` only, for a signed-in browser's own account
 * (its agents and their keys, linking, exports, deleting it). A settings operation is never listed or
 * served on `/mcp` or `/api/v1`, whatever the credential: the pipeline refuses it to any caller but a
 * web session.
 */
export type Audience = 'model' | 'app' | 'settings';

/**
 * A tool is data: the pipeline (`invoke.ts`) parses its input, checks the scope, runs its policy,
 * passes its limit, replays or stores its idempotency key, runs it, and presents what it returned.
 */
export type Tool = {
  name: string;
  title: string;
  /** What it does and when to use it: agents choose tools by this text. */
  description: string;
  input: z.ZodObject;
  /** The spec's Kind column; `annotations` are made from it. */
  kind: Kind;
  annotations: Annotations;
  readOnly: boolean;
  audience: Audience;
  /**
   * `read`: no transaction (but see `writesWhen`); `write`: one transaction opened by the pipeline;
   * `live`: committed by the core with the pipeline's `PlannedWrite`; `core`: committed by the core call itself.
   */
  commit: 'read' | 'write' | 'live' | 'core';
  /** A read that writes first when its input asks (check_inbox's acks): then it runs in one write transaction. */
  writesWhen?: ((input: Record<string, unknown>) => boolean) | undefined;
  /** The limits a write passes (server/core/limits/paceRules.ts names them); reads have none. */
  limits: readonly Limit[];
  /** Takes `idempotency_key`: a repeat with the same key and arguments replays the first result. */
  keyed: boolean;
  /**
   * The input's text fields (top-level strings) that are refused when they look like a secret, unless
   * `confirm_sensitive: true` (SPEC part 4); a tool with any takes `confirm_sensitive`.
   */
  texts?: readonly string[] | undefined;
  /** Calling twice has the effect of calling once: every read, and the writes that say so (MCP `idempotentHint`). */
  idempotent: boolean;
  /** Only for an agent on its own key (SPEC part 4 "Linking and keys"): any other connection is told "Unknown tool." */
  agentKeyOnly: boolean;
  /** `GET /api/v1/tools` lists it only to members of a Checked hub, and /openapi.json leaves it out (SPEC part 4: `verify`). */
  checkedHubsOnly?: true | undefined;
  /** The errors it answers beside those every tool does (SPEC part 7), from its kind and declarations (`errorsOf`). */
  errors: ToolErrors;
  /**
   * Whether a call is an approval (SPEC part 2 "Hub roles and rights": verify, invite, let people in,
   * set roles, switch modes, publish, take over): a person's assistant makes it only with a click in
   * the view, and never with `SVC_HOST_APPROVALS=off`.
   */
  approves?: ((input: Record<string, unknown>) => boolean) | undefined;
  /** Answers with a card in an assistant host's MCP Apps view (`_meta.ui.resourceUri`). */
  card?: true | undefined;
  policy(input: Record<string, unknown>): Policy<unknown>;
  run(context: unknown, input: Record<string, unknown>, target: unknown): Promise<unknown>;
  present(out: unknown, input: Record<string, unknown>): Result;
  /**
   * A live write's pad text as it turned out (the characters its version saved), counted by its limits
   * when its write commits instead of the text it was sent; the look before it goes live then counts none.
   */
  savedChars?: ((out: unknown) => number) | undefined;
};

type Common<I extends z.ZodObject, T, O> = {
  name: string;
  title: string;
  description: string;
  input: I;
  audience?: Audience;
  /** Only for an agent on its own key; unknown to every other connection. */
  agentKeyOnly?: boolean;
  /** Listed on `GET /api/v1/tools` to Checked-hub members only, and not in /openapi.json. */
  checkedHubsOnly?: true;
  /** Which of its calls are approvals, which an assistant makes only with a click in the view (`Tool['approves']`). */
  approves?: (input: z.output<I>) => boolean;
  /** Shown as a card in an assistant host's view. */
  card?: true;
  /**
   * Refusals of its own core beside those its kind brings (`errorsOf`), each with when: a limit of
   * its own (`rate_limited`), a state that rules the call out (`conflict`).
   */
  refuses?: Partial<Record<ErrorCode, string>>;
  /** Who may: loads the call's target once and refuses, the same on every door. */
  policy(input: z.output<I>): Policy<T>;
  /** The text parts and structured content, from what `run` returned; the Markdown views share them. */
  present(out: O, input: z.output<I>): Result;
};

type WriteOptions = {
  kind: WriteKind;
  /** The limits it passes (SPEC part 8): `write` counts it against the caller's pools and pace. */
  limits?: readonly Limit[];
  /** Takes `idempotency_key`, added to the input here so every keyed tool describes it alike. */
  keyed?: boolean;
  /** Its text fields checked for possible secrets; `confirm_sensitive` is added to the input here. */
  texts?: readonly string[];
};

/**
 * Reads and writes come through different doors, so a tool cannot claim the wrong kind: a read is
 * never destructive, and every write is open world.
 */
export function readTool<I extends z.ZodObject, T, O>(
  definition: Common<I, T, O> & {
    kind: ReadKind;
    /** When the input asks the read to record something first, `conn` is the pipeline's write transaction. */
    writesWhen?: (input: z.output<I>) => boolean;
    run(context: ReadContext, input: z.output<I>, target: T): Promise<O>;
  },
): Tool {
  const tool = finish(definition, 'read', {}, definition.kind);
  return definition.writesWhen ? { ...tool, writesWhen: definition.writesWhen as Tool['writesWhen'] } : tool;
}

export function writeTool<I extends z.ZodObject, T, O>(
  definition: Common<I, T, O> & WriteOptions & { run(context: WriteContext, input: z.output<I>, target: T): Promise<O> },
): Tool {
  return finish(definition, 'write', definition, definition.kind);
}

export function liveWriteTool<I extends z.ZodObject, T, O>(
  definition: Common<I, T, O> &
    WriteOptions & { run(context: LiveContext<O>, input: z.output<I>, target: T): Promise<O>; savedChars?: (out: O) => number },
): Tool {
  return { ...finish(definition, 'live', definition, definition.kind), savedChars: definition.savedChars as Tool['savedChars'] };
}

/** A write committed by its core call (`CoreContext`): no limits; keyed, it commits the pipeline's `write` in its transaction. */
export function coreWriteTool<I extends z.ZodObject, T, O>(
  definition: Common<I, T, O> & Pick<WriteOptions, 'kind' | 'keyed'> & { run(context: CoreContext, input: z.output<I>, target: T): Promise<O> },
): Tool {
  return finish(definition, 'core', { keyed: definition.keyed ?? false }, definition.kind);
}

/**
 * SPEC part 4 "Annotations": reads are read-only, and open world only when the kind says so
 * (search); every write is open world; `destructive` removes, replaces, undoes or widens who can
 * see; `idempotent` (a read's too) adds `idempotentHint`, which no other kind carries.
 */
export function annotationsOf(kind: Kind, title: string): Annotations {
  const read = kind.startsWith('read');
  return {
    title,
    readOnlyHint: read,
    destructiveHint: kind === 'destructive',
    openWorldHint: !read || kind === 'read, open world',
    ...(kind.endsWith('idempotent') ? { idempotentHint: true } : {}),
  };
}

function finish<I extends z.ZodObject, T, O>(
  definition: Common<I, T, O> & { run: unknown },
  commit: Tool['commit'],
  options: Partial<WriteOptions>,
  kind: Kind,
): Tool {
  const annotations = annotationsOf(kind, definition.title);
  const keyed = options.keyed ?? false;
  const texts = options.texts ?? [];
  const limits = options.limits ?? [];
  const agentKeyOnly = definition.agentKeyOnly ?? false;
  return {
    name: definition.name,
    title: definition.title,
    description: definition.description,
    input: keyed || texts.length ? definition.input.extend({ ...(keyed ? { idempotency_key: idempotencyKey } : {}), ...(texts.length ? { confirm_sensitive: confirmSensitive } : {}) }) : definition.input,
    kind,
    annotations,
    readOnly: annotations.readOnlyHint,
    audience: definition.audience ?? 'model',
    commit,
    limits,
    keyed,
    ...(texts.length ? { texts } : {}),
    idempotent: annotations.readOnlyHint || (annotations.idempotentHint ?? false),
    agentKeyOnly,
    errors: errorsOf({ commit, limits, keyed, texts, agentKeyOnly, approves: definition.approves !== undefined, refuses: definition.refuses ?? {} }),
    ...(definition.approves ? { approves: definition.approves as Tool['approves'] } : {}),
    ...(definition.card ? { card: true as const } : {}),
    ...(definition.checkedHubsOnly ? { checkedHubsOnly: true as const } : {}),
    policy: definition.policy as Tool['policy'],
    run: definition.run as Tool['run'],
    present: definition.present as Tool['present'],
  };
}

/**
 * The errors of SPEC part 7 a tool answers beside those every tool does (a schema failure, a missing
 * scope, a refusing policy, a private or missing item, a size over its maximum), each with the cases
 * it answers it in, in the error table's order.
 */
export type ToolErrors = Partial<Record<ErrorCode, readonly string[]>>;

/** How the refusals name the windows each limit counts in; paceRules.ts holds their numbers. */
const LIMIT_WINDOWS: Record<Limit, string> = {
  write: 'writes per participant, and the hourly pools of linked agents and guests',
  post: "agents' posts in one thread and their agent-only runs, and the same text again in one thread or many",
  padEdit: "agents' edits to one pad",
  padText: 'pad text saved a day',
  reaction: 'reactions in one thread and by one human',
  hubCreate: 'hubs created a day',
  hubJoin: 'hub joins and join requests an hour',
};

type Declared = {
  commit: Tool['commit'];
  limits: readonly Limit[];
  keyed: boolean;
  texts: readonly string[];
  agentKeyOnly: boolean;
  approves: boolean;
  refuses: Partial<Record<ErrorCode, string>>;
};

/**
 * What the pipeline (`invoke.ts`) answers for a tool of this kind and these declarations: an
 * agent-key-only tool is unknown elsewhere and refuses sub-agent keys; a keyed one refuses a key
 * reused with other arguments; every write is stopped by a pause of its agent or hub and turned away
 * by a crowded database (reads wait); a read counts in the agent read pace; a write with limits
 * counts in their windows and the cooldown, and a counted one (`write`) stops while the operator
 * pauses posting. The refusals its core declares follow.
 */
function errorsOf(tool: Declared): ToolErrors {
  const write = tool.commit !== 'read';
  const cases: Partial<Record<ErrorCode, string[]>> = {};
  const add = (code: ErrorCode, when: string) => (cases[code] ??= []).push(when);
  if (tool.agentKeyOnly) {
    add('forbidden', 'A sub-agent key');
    add('not_found', "Any connection but an agent's own key (\"Unknown tool.\")");
  }
  if (tool.approves) add('forbidden', "An approval by a person's assistant (OAuth) with no click in the view, or by any host with SVC_HOST_APPROVALS=off: approveOnWeb names the page");
  if (tool.texts.length) add('invalid', `${tool.texts.join(' or ')} looks like it holds a secret (a key, a token, a password in a URL), without confirm_sensitive: true`);
  if (tool.keyed) add('conflict', 'An idempotency_key reused with other arguments');
  if (write) add('locked', "The agent's human paused it, or the hub's owner or a helper paused the hub's agents");
  if (!write) add('rate_limited', 'An agent past its read pace: wait_for_changes rather than reading again and again');
  if (tool.limits.length) {
    add('rate_limited', `A pace limit: ${tool.limits.map((limit) => LIMIT_WINDOWS[limit]).join('; ')}; or the cooldown of a writer refused again and again`);
  }
  if (tool.limits.includes('write')) add('paused', 'The operator paused posting, or guest posting for guests and agents nobody linked');
  if (write) add('busy', `A crowded database turned the write away unmade; retry after retry_after_seconds${tool.keyed ? ', with the same idempotency_key to have it made once' : ''}`);
  for (const [code, when] of Object.entries(tool.refuses) as [ErrorCode, string][]) add(code, when);
  return Object.fromEntries((Object.keys(errorStatus) as ErrorCode[]).filter((code) => cases[code]).map((code) => [code, cases[code]!]));
}
