import type { CommonQueryMethods, DatabaseTransactionConnection } from 'slonik';
import type { z } from 'zod';
import type { Actor } from '../../server/core/kernel/actor.ts';
import type { Core } from '../../server/core/kernel/context.ts';
import type { Limit } from '../../server/core/limits/limits.ts';
import type { Policy } from '../../server/core/places/policies.ts';
import type { Result } from '../../server/core/kernel/result.ts';
import { idempotencyKey } from '../../schema/tools/fields.ts';

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
 * A write to a live pad opens its transaction itself, once the change is in the live document, and
 * calls `seal` inside it with what it will answer: the pipeline counts the write and stores the
 * idempotency record there. Not calling `seal` means nothing was written. `seal` is left out when
 * the pipeline has nothing to write beside the change (no key, no allowance to count), so the pad
 * layer can commit its version in one statement, without a transaction's round trips.
 */
export type LiveContext<O> = { core: Core; actor: Actor; seal: ((tx: DatabaseTransactionConnection, out: O) => Promise<void>) | undefined };

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
  annotations: Annotations;
  readOnly: boolean;
  /** `model`: MCP, REST and the web app; `app`: the web app only. */
  audience: 'model' | 'app';
  /** `read`: no transaction; `write`: one transaction opened by the pipeline; `live`: sealed by the pad layer. */
  commit: 'read' | 'write' | 'live';
  /** The limits a write passes (server/core/limits/paceRules.ts names them); reads have none. */
  limits: readonly Limit[];
  /** Takes `idempotency_key`: a repeat with the same key and arguments replays the first result. */
  keyed: boolean;
  /** Only for an agent on its own key (SPEC part 4 "Linking and keys"): any other connection is told "Unknown tool." */
  agentKeyOnly: boolean;
  policy(input: Record<string, unknown>): Policy<unknown>;
  run(context: unknown, input: Record<string, unknown>, target: unknown): Promise<unknown>;
  present(out: unknown, input: Record<string, unknown>): Result;
  /**
   * A live write's pad text as it turned out (the characters its version saved), counted by its limits
   * in the seal instead of the text it was sent; the look before it goes live then counts none.
   */
  savedChars?: ((out: unknown) => number) | undefined;
};

type Common<I extends z.ZodObject, T, O> = {
  name: string;
  title: string;
  description: string;
  input: I;
  audience?: 'model' | 'app';
  /** Only for an agent on its own key; unknown to every other connection. */
  agentKeyOnly?: boolean;
  /** Who may: loads the call's target once and refuses, the same on every door. */
  policy(input: z.output<I>): Policy<T>;
  /** The text parts and structured content, from what `run` returned; the Markdown views share them. */
  present(out: O, input: z.output<I>): Result;
};

type WriteOptions = {
  destructive?: boolean;
  /** Calling twice has the effect of calling once (MCP `idempotentHint`). */
  idempotent?: boolean;
  /** The limits it passes (SPEC part 8): `write` counts it against the caller's pools and pace. */
  limits?: readonly Limit[];
  /** Takes `idempotency_key`, added to the input here so every keyed tool describes it alike. */
  keyed?: boolean;
};

/**
 * Reads and writes come through different doors, so a tool cannot claim the wrong annotations:
 * a read is never destructive, and open world only when it says so (search); every write is open world.
 */
export function readTool<I extends z.ZodObject, T, O>(
  definition: Common<I, T, O> & { /** Reaches beyond one item (search, SPEC part 4 "Annotations"). */ openWorld?: boolean; run(context: ReadContext, input: z.output<I>, target: T): Promise<O> },
): Tool {
  return finish(definition, 'read', {}, { title: definition.title, readOnlyHint: true, destructiveHint: false, openWorldHint: definition.openWorld ?? false });
}

export function writeTool<I extends z.ZodObject, T, O>(
  definition: Common<I, T, O> & WriteOptions & { run(context: WriteContext, input: z.output<I>, target: T): Promise<O> },
): Tool {
  return finish(definition, 'write', definition, writeAnnotations(definition));
}

export function liveWriteTool<I extends z.ZodObject, T, O>(
  definition: Common<I, T, O> &
    WriteOptions & { run(context: LiveContext<O>, input: z.output<I>, target: T): Promise<O>; savedChars?: (out: O) => number },
): Tool {
  return { ...finish(definition, 'live', definition, writeAnnotations(definition)), savedChars: definition.savedChars as Tool['savedChars'] };
}

const writeAnnotations = (definition: { title: string } & WriteOptions): Annotations => ({
  title: definition.title,
  readOnlyHint: false,
  destructiveHint: definition.destructive ?? false,
  openWorldHint: true,
  ...(definition.idempotent ? { idempotentHint: true } : {}),
});

function finish<I extends z.ZodObject, T, O>(definition: Common<I, T, O> & { run: unknown }, commit: Tool['commit'], options: WriteOptions, annotations: Annotations): Tool {
  const keyed = options.keyed ?? false;
  return {
    name: definition.name,
    title: definition.title,
    description: definition.description,
    input: keyed ? definition.input.extend({ idempotency_key: idempotencyKey }) : definition.input,
    annotations,
    readOnly: annotations.readOnlyHint,
    audience: definition.audience ?? 'model',
    commit,
    limits: options.limits ?? [],
    keyed,
    agentKeyOnly: definition.agentKeyOnly ?? false,
    policy: definition.policy as Tool['policy'],
    run: definition.run as Tool['run'],
    present: definition.present as Tool['present'],
  };
}
