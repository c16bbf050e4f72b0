import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { IdempotencyRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError } from '../../../schema/errors.ts';
import { line, type Result } from '../kernel/result.ts';
import { sha256Hex } from '../kernel/secrets.ts';

const ArgsHashRow = IdempotencyRow.pick({ args_hash: true });

/** JSON with keys sorted at every level, so equal arguments hash equally whatever their order. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

class ReplayRace extends Error {}

/** The fields of an answer that carry a secret (a new key, a link with its code): shown once, never stored. */
const SECRET_FIELDS = ['agent_key', 'link_url'] as const;

/**
 * The result as it may be kept for a replay: a secret in it is taken out (keys are stored only as
 * hashes), and the replay says where it went and how to get another.
 */
function keepable(result: Result, tool: string): Result {
  const secrets = SECRET_FIELDS.filter((field) => typeof result.data[field] === 'string');
  if (!secrets.length) return result;
  const data = { ...result.data };
  let parts = JSON.stringify(result.parts);
  for (const field of secrets) {
    parts = parts.replaceAll(JSON.stringify(data[field]).slice(1, -1), '(not shown again)');
    delete data[field];
  }
  return {
    ...result,
    parts: [
      ...(JSON.parse(parts) as Result['parts']),
      line(`The ${secrets.join(' and ')} was shown only in the first answer and is not kept; if it was lost, call ${tool} again with a new idempotency_key.`),
    ],
    data: { ...data, key_shown: 'first answer only' },
  };
}

function replay(stored: Result): Result {
  return {
    ...stored,
    parts: [line('Replayed: this idempotency_key was used before with the same arguments; nothing new was written.'), ...stored.parts],
    data: { ...stored.data, replayed: true },
  };
}

/**
 * One idempotency key of one participant's call: `earlier(conn)` finds a first result to replay (or
 * refuses the key with other arguments), `store(tx, result)` records the result in the write's own
 * transaction, and `winner(error)` answers with the result of a concurrent call that stored it first.
 * The tool pipeline is the one user: every keyed tool gets the same behaviour.
 */
export function idempotencyKey(core: Core, actor: Actor, tool: string, key: string, args: Record<string, unknown>) {
  const { idempotency_key: _, ...rest } = args;
  const argsHash = sha256Hex(stableJson(rest));
  const earlier = async (conn: CommonQueryMethods = core.db.pool) => {
    const row = await conn.maybeOne(sql.type(IdempotencyRow)`
      SELECT args_hash, result FROM idempotency_keys
      WHERE participant_id = ${actor.id} AND tool = ${tool} AND key = ${key}`);
    if (!row) return null;
    if (row.args_hash !== argsHash) {
      throw new AppError('conflict', 'This idempotency_key was already used with other arguments; use a new key for a new write.');
    }
    return replay(row.result as Result);
  };
  return {
    earlier,
    async store(tx: DatabaseTransactionConnection, result: Result) {
      const stored = await tx.maybeOneFirst(sql.type(ArgsHashRow)`
        INSERT INTO idempotency_keys (participant_id, tool, key, args_hash, result)
        VALUES (${actor.id}, ${tool}, ${key}, ${argsHash}, ${sql.jsonb(JSON.parse(JSON.stringify(keepable(result, tool))))})
        ON CONFLICT DO NOTHING RETURNING args_hash`);
      // A concurrent call with the same key committed first: undo ours and answer with theirs.
      if (stored === null) throw new ReplayRace();
    },
    /** After `error`: the first call's result when a concurrent one won the key, else the error again. */
    async winner(error: unknown): Promise<Result> {
      if (!(error instanceof ReplayRace)) throw error;
      const first = await earlier();
      if (!first) throw error;
      return first;
    },
  };
}
