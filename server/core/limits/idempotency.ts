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

/** The field of an answer that carries a new key (rotate_key, mint_subagent): shown once, never stored. */
const SECRET_FIELD = 'agent_key';

/**
 * The result as it may be kept for a replay: a new key in it is taken out (keys are stored only as
 * hashes), and the replay says where it went and how to get another.
 */
function keepable(result: Result, tool: string): Result {
  const secret = result.data[SECRET_FIELD];
  if (typeof secret !== 'string') return result;
  const { [SECRET_FIELD]: _, ...data } = result.data;
  return {
    ...result,
    parts: [
      ...result.parts.map((part) => JSON.parse(JSON.stringify(part).replaceAll(secret, '(not shown again)')) as typeof part),
      line(`The key itself was shown only in the first answer and is not kept; if it was lost, call ${tool} again with a new idempotency_key.`),
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
