import { describe, expect, it } from 'vitest';
import { ipLimitNamespace } from '../../api/http/ipLimits.ts';

describe('per-IP counts in Redis', () => {
  it('are kept under the name of the database the instances share, apart from another service on the same Redis', () => {
    expect(ipLimitNamespace('postgres://dotpad:secret@db.internal:5432/dotpad_prod?sslmode=require')).toBe('dotpad_prod');
    expect(ipLimitNamespace('postgres://postgres@127.0.0.1:5432/dotpad_test_1a2b')).not.toBe(ipLimitNamespace('postgres://postgres@127.0.0.1:5432/dotpad_test_3c4d'));
    expect(ipLimitNamespace('postgres://postgres@127.0.0.1:5432')).toBe('postgres');
    expect(ipLimitNamespace(undefined)).toBe('embedded');
  });
});
