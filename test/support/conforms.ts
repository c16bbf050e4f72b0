import type { JsonSchema } from './arbitraryFromSchema.ts';

/** Whether a JSON value keeps to `schema`, by the rules zod applies (string length in UTF-16 units). */
export function conforms(schema: JsonSchema, value: unknown): boolean {
  if (schema.anyOf) return schema.anyOf.some((branch) => conforms(branch, value));
  if (schema.enum && !schema.enum.includes(value)) return false;
  switch (schema.type) {
    case 'string':
      return (
        typeof value === 'string' &&
        value.length >= (schema.minLength ?? 0) &&
        value.length <= (schema.maxLength ?? Infinity) &&
        (schema.pattern === undefined || new RegExp(schema.pattern).test(value))
      );
    case 'integer':
    case 'number':
      return (
        typeof value === 'number' &&
        Number.isFinite(value) &&
        (schema.type === 'number' || Number.isSafeInteger(value)) &&
        value >= (schema.minimum ?? -Infinity) &&
        value <= (schema.maximum ?? Infinity)
      );
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return (
        Array.isArray(value) &&
        value.length >= (schema.minItems ?? 0) &&
        value.length <= (schema.maxItems ?? Infinity) &&
        value.every((item) => !schema.items || conforms(schema.items, item))
      );
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
      const record = value as Record<string, unknown>;
      if ((schema.required ?? []).some((name) => !Object.hasOwn(record, name))) return false;
      return Object.entries(schema.properties ?? {}).every(([name, s]) => !Object.hasOwn(record, name) || conforms(s, record[name]));
    }
    default:
      return true;
  }
}
