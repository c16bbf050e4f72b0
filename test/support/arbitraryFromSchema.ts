import fc from 'fast-check';
import { conforms } from './conforms.ts';

/** The part of JSON Schema that `z.toJSONSchema(input, { io: 'input' })` writes for tool inputs. */
export type JsonSchema = {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'array' | 'object';
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  description?: string;
};

/**
 * A string that stands for something in the seeded world (the `index`th thread, say): each server
 * of a fuzz run holds its own ids, so an input names them and is resolved per server.
 */
export class Ref {
  readonly kind: string;
  readonly index: number;
  constructor(kind: string, index: number) {
    this.kind = kind;
    this.index = index;
  }
}

/** What a test knows about a field beyond its schema, looked up by field name and schema. */
export type FieldHint = {
  /** Values worth trying here (real ids, ids of other kinds, made-up ones), beside what the schema allows. */
  pool: fc.Arbitrary<unknown>;
  /** Valid inputs always carry the field and take only pool values (a long poll's timeout, kept short). */
  pinned?: boolean;
};
export type Hints = (field: string, schema: JsonSchema) => FieldHint | undefined;

/** `breaks` says how the input breaks its schema, or is null when it keeps to it. */
export type FuzzInput = { args: Record<string, unknown>; breaks: string | null };

/** Text that has hurt services before: NUL, lone surrogates, emoji, RTL, combining marks, fences, markup. */
const TRICKY = [
  '\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\udc00y', '👍🏽', '👨‍👩‍👧', '🏳️‍🌈', 'مرحبا بالعالم', 'שלום', '\u202Eevil\u202C',
  'e\u0301\u0302\u0303', 'Z̷̢̛͍a̶l̸g̵o̶', '\u200b', '\ufeff', '\u2028\u2029', '\r\n', '\t', '   ', '~~~', '```', '<script>x</script>',
  "'; DROP TABLE posts; --", '%s%n', '${x}', '\\', '"', 'null', 'undefined', 'NaN', '__proto__', 'constructor', '# H\n\n- li',
];

/** Extra argument names the tools do not take, including ones that name JavaScript's object machinery. */
const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'extra_field', '', '💥', 'x'.repeat(300)];

/** Huge strings stop here, so that no input passes a door's body limit (MCP takes 400,000 bytes). */
const HUGE_CAP = 150_000;
const BODY_BUDGET = 300_000;

/** Cuts or pads `text` to a length within [min, max] (UTF-16 units, as zod counts). */
const fit = (text: string, min: number, max: number) => (text.length > max ? text.slice(0, max) : text.padEnd(min, 'x'));

function validString(schema: JsonSchema, small: boolean): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 5_000, small ? Math.max(min, 16) : Infinity);
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= max);
  const tricky = fc.array(fc.oneof(fc.constantFrom(...TRICKY), fc.string({ maxLength: 6 })), { minLength: 1, maxLength: 5 }).map((parts) => parts.join(''));
  const flavours: fc.WeightedArbitrary<string>[] = [
    { weight: 4, arbitrary: fc.string({ maxLength: 30 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
    { weight: 4, arbitrary: tricky },
  ];
  if (!small) {
    // Exactly at the bounds: mostly ASCII so the body stays small, with something odd in front.
    flavours.push({ weight: 1, arbitrary: fc.constantFrom(...TRICKY).map((head) => fit(head + 'a'.repeat(max), max, max)) });
    flavours.push({ weight: 1, arbitrary: fc.constant('a'.repeat(min)) });
  }
  return fc.oneof({ withCrossShrink: true }, ...flavours).map((text) => fit(text, min, max));
}

function validNumber(schema: JsonSchema): fc.Arbitrary<number> {
  const min = Math.max(schema.minimum ?? -(2 ** 31), -(2 ** 31));
  const max = Math.min(schema.maximum ?? 2 ** 31 - 1, 2 ** 31 - 1);
  const edges = [min, max, 0, 1, min + 1, max - 1].filter((n) => n >= min && n <= max);
  const any = schema.type === 'integer' ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return fc.oneof(fc.constantFrom(...edges), any);
}

/** A value that keeps to `schema`, or a pool value from the field's hint. */
function valid(schema: JsonSchema, field: string, hints: Hints, small: boolean): fc.Arbitrary<unknown> {
  const hint = hints(field, schema);
  if (hint?.pinned) return hint.pool;
  const own = plain(schema, field, hints, small);
  return hint ? fc.oneof({ withCrossShrink: true }, { weight: 3, arbitrary: hint.pool }, { weight: 1, arbitrary: own }) : own;
}

function plain(schema: JsonSchema, field: string, hints: Hints, small: boolean): fc.Arbitrary<unknown> {
  if (schema.anyOf) return fc.oneof({ withCrossShrink: true }, ...schema.anyOf.map((branch) => valid(branch, field, hints, small)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case 'string':
      return validString(schema, small);
    case 'integer':
    case 'number':
      return validNumber(schema);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return validArray(schema, field, hints, small);
    case 'object':
      return validObject(schema, hints, small);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function validArray(schema: JsonSchema, field: string, hints: Hints, small: boolean): fc.Arbitrary<unknown[]> {
  const item = schema.items ?? {};
  const min = schema.minItems ?? 0;
  const few = fc.array(valid(item, field, hints, small), { minLength: min, maxLength: Math.max(min, Math.min(schema.maxItems ?? 3, 3)) });
  const max = schema.maxItems;
  if (small || max === undefined || max > 500) return few;
  // Exactly as many items as allowed, each small.
  const full = fc.array(valid(item, field, hints, true), { minLength: max, maxLength: max });
  return fc.oneof({ weight: 6, arbitrary: few }, { weight: 1, arbitrary: full });
}

function validObject(schema: JsonSchema, hints: Hints, small: boolean): fc.Arbitrary<Record<string, unknown>> {
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([name, s]) => {
    const value = valid(s, name, hints, small).map((v): [string, unknown][] => [[name, v]]);
    // fc.option, unlike fc.oneof, shrinks an optional field away.
    return required.has(name) || hints(name, s)?.pinned ? value : fc.option(value, { nil: [], freq: 2 });
  });
  return fc.tuple(...fields).map((entries) => Object.fromEntries(entries.flat()));
}

type Broken = { value: unknown; breaks: string };

/** Values of every JSON type, and the edges of this schema's bounds; those `schema` accepts are dropped. */
function wrongValues(schema: JsonSchema): [string, unknown][] {
  const candidates: [string, unknown][] = [
    ['null (as NaN and Infinity travel in JSON)', null],
    ['true', true],
    ['-1', -1],
    ['0', 0],
    ['1.5', 1.5],
    ['2^31', 2 ** 31],
    ['2^53', 2 ** 53],
    ['1e308', 1e308],
    ['-1e308', -1e308],
    ['"7" (a number as a string)', '7'],
    ['empty string', ''],
    ['an array', ['x']],
    ['an object', { a: 1 }],
    ['an object with a __proto__ key', JSON.parse('{"__proto__":{"polluted":true}}')],
    ...edges(schema),
  ];
  return candidates.filter(([, value]) => !conforms(schema, value));
}

/** Just past each bound of `schema` (and of its anyOf branches). */
function edges(schema: JsonSchema): [string, unknown][] {
  const out: [string, unknown][] = (schema.anyOf ?? []).flatMap(edges);
  if (schema.minimum !== undefined) out.push(['minimum - 1', schema.minimum - 1]);
  if (schema.maximum !== undefined) out.push(['maximum + 1', schema.maximum + 1], ['maximum + 0.5', schema.maximum + 0.5]);
  if (schema.minLength !== undefined && schema.minLength > 1) out.push([`${schema.minLength - 1} characters`, 'a'.repeat(schema.minLength - 1)]);
  if (schema.maxLength !== undefined) {
    out.push([`${schema.maxLength + 1} characters`, 'a'.repeat(schema.maxLength + 1)]);
    const huge = Math.min(schema.maxLength * 3 + 10, HUGE_CAP);
    out.push([`${huge + 2} characters (huge)`, `👍${'a'.repeat(huge)}`]);
  }
  if (schema.enum) {
    const first = String(schema.enum[0]);
    out.push(['not one of the enum', 'nope'], ['an enum value in capitals', first.toUpperCase()], ['an enum value and a space', `${first} `]);
  }
  if (schema.pattern) out.push(['" 1"', ' 1'], ['"1.5"', '1.5'], ['"-1"', '-1'], ['Arabic-Indic digits', '١٢٣'], ['"1\\n"', '1\n']);
  if (schema.maxItems !== undefined && schema.items) {
    out.push([`${schema.maxItems + 1} items`, Array.from({ length: schema.maxItems + 1 }, () => simplest(schema.items!))]);
  }
  return out;
}

/** The plainest value that keeps to `schema`. */
function simplest(schema: JsonSchema): unknown {
  if (schema.anyOf) return simplest(schema.anyOf[0]!);
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      return 'a'.repeat(Math.max(schema.minLength ?? 0, 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((name) => [name, simplest(schema.properties?.[name] ?? {})]));
    default:
      return null;
  }
}

/** A value that breaks `schema` in exactly one place, saying where (`path`) and how. */
function broken(schema: JsonSchema, field: string, path: string, hints: Hints, top = false): fc.Arbitrary<Broken> | undefined {
  const options: fc.Arbitrary<Broken>[] = [];
  // The arguments as a whole are always an object here: other JSON is the JSON-RPC level's concern.
  const wrong = top ? [] : wrongValues(schema);
  if (wrong.length) options.push(fc.constantFrom(...wrong).map(([label, value]) => ({ value, breaks: `${path}: ${label}` })));
  if (schema.type === 'object') {
    const base = validObject(schema, hints, true);
    const at = (name: string) => (path ? `${path}.${name}` : name);
    for (const name of schema.required ?? []) {
      options.push(base.map((object) => {
        const { [name]: _, ...rest } = object;
        return { value: rest, breaks: `${at(name)}: missing` };
      }));
    }
    for (const [name, s] of Object.entries(schema.properties ?? {})) {
      const inner = broken(s, name, at(name), hints);
      if (inner) options.push(fc.tuple(base, inner).map(([object, { value, breaks }]) => ({ value: { ...object, [name]: value }, breaks })));
    }
  }
  if (schema.type === 'array' && schema.items) {
    const item = broken(schema.items, field, `${path}[]`, hints);
    const rest = fc.array(valid(schema.items, field, hints, true), { maxLength: 2 });
    if (item) options.push(fc.tuple(rest, item).map(([items, bad]) => ({ value: [...items, bad.value], breaks: bad.breaks })));
  }
  return options.length ? fc.oneof(...options) : undefined;
}

/** UTF-8 bytes of an input's JSON, with each Ref counted as an id of 24 characters. */
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value, (_, v) => (v instanceof Ref ? 'x'.repeat(24) : v)));

/**
 * Inputs for one tool: some keep to its schema, some break it in exactly one place; either may carry
 * extra arguments the tool does not take. Inputs whose JSON would pass a door's body limit are left out.
 */
export function toolInput(schema: JsonSchema, hints: Hints): fc.Arbitrary<FuzzInput> {
  const extras = fc.array(fc.tuple(fc.constantFrom(...EXTRA_KEYS.filter((key) => !schema.properties?.[key])), fc.jsonValue({ maxDepth: 2 })), { maxLength: 2 });
  const keeps = validObject(schema, hints, false).map((args) => ({ args, breaks: null as string | null }));
  const breaks = broken({ ...schema, type: 'object' }, '', '', hints, true);
  const inputs = breaks ? fc.oneof(keeps, breaks.map(({ value, breaks }) => ({ args: value as Record<string, unknown>, breaks }))) : keeps;
  return fc
    .tuple(inputs, fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: extras }))
    .map(([input, extra]) => ({ ...input, args: Object.fromEntries([...Object.entries(input.args), ...extra]) }))
    .filter((input) => bytesOf(input.args) <= BODY_BUDGET);
}

/** The input with each Ref replaced by the id it stands for on one server. */
export function resolve(value: unknown, idOf: (ref: Ref) => string): unknown {
  if (value instanceof Ref) return idOf(value);
  if (Array.isArray(value)) return value.map((item) => resolve(item, idOf));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, idOf)]));
  return value;
}
