import { describe, expect, it } from 'vitest';
import { listMigrations, splitStatements } from '../../server/db/migrations.ts';

describe('migrations', () => {
  it('split into statements on semicolons outside quotes, comments and dollar quotes', () => {
    const text = `-- a comment; not a split
CREATE TABLE a (x text DEFAULT ';');
/* block; comment */ CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;
INSERT INTO a VALUES ('it''s; fine');
`;
    const statements = splitStatements(text).map((s) => s.trim());
    expect(statements).toHaveLength(3);
    expect(statements[0]).toContain("DEFAULT ';')");
    expect(statements[1]).toContain('SELECT 1; $body$ LANGUAGE sql');
    expect(statements[2]).toBe("INSERT INTO a VALUES ('it''s; fine')");
  });

  it('are numbered without gaps', () => {
    const versions = listMigrations().map((m) => Number(m.version));
    expect(versions).toEqual(versions.map((_, i) => i + 1));
  });
});
