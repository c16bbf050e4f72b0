import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * DESIGN.md "Folders": the shells in api/ never run SQL, and the one pipeline (api/tools/invoke.ts)
 * is the only place there that opens a transaction; everything else calls the core.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const PIPELINE = 'api/tools/invoke.ts';

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** A value import of slonik's `sql` tag (type-only imports of slonik's connection types are fine). */
const importsSql = (text: string) => /import\s*\{[^}]*(?<!type\s)\bsql\b[^}]*\}\s*from\s*'slonik'/.test(text);
/** SQL written here: the tag, or one of its helpers. */
const writesSql = (text: string) => /\bsql`|\bsql\.(type|prepared|unsafe|fragment|array|join|identifier|json|jsonb|binary|date|timestamp|interval|uuid|literalValue)\b/.test(text);
/** A transaction or a write opened here rather than by the pipeline. */
const opensWrite = (text: string) => /\.(transaction|write|writeStatement|writeOrBusy|readOrBusy)\(/.test(text);

describe('the shells in api/', () => {
  const files = sourcesUnder('api');

  it('the checks find what they look for', () => {
    expect(files.length).toBeGreaterThan(40);
    expect(importsSql(`import { sql } from 'slonik';`)).toBe(true);
    expect(importsSql(`import { sql, type CommonQueryMethods } from 'slonik';`)).toBe(true);
    expect(importsSql(`import type { CommonQueryMethods } from 'slonik';`)).toBe(false);
    expect(writesSql('tx.any(sql.type(Row)`SELECT 1`)')).toBe(true);
    expect(writesSql('tx.exists(sql.unsafe`SELECT 1`)')).toBe(true);
    expect(opensWrite('core.db.write(async (tx) => {')).toBe(true);
    expect(opensWrite('core.db.writeStatement((db) => ackItems(db))')).toBe(true);
  });

  it.each(files)('%s runs no SQL of its own', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    expect(importsSql(text), 'imports slonik’s sql').toBe(false);
    expect(writesSql(text), 'writes SQL').toBe(false);
  });

  it('only the pipeline opens a transaction or a write', () => {
    const opening = files.filter((file) => file !== PIPELINE && opensWrite(readFileSync(join(root, file), 'utf8')));
    expect(opening).toEqual([]);
    expect(opensWrite(readFileSync(join(root, PIPELINE), 'utf8'))).toBe(true);
  });
});
