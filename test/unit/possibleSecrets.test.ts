import { describe, expect, it } from 'vitest';
import { refusePossibleSecrets } from '../../server/core/limits/possibleSecrets.ts';

/** The possible-secrets check (SPEC part 4 `confirm_sensitive`), which every write with text runs. */

const KEY = `svcb_${'Ab3_x9-Q'.repeat(6)}`;

describe('possible secrets', () => {
  it('refuses new text that holds a key, naming the field and the way through', async () => {
    await expect(refusePossibleSecrets([{ path: 'body', text: `Here: ${KEY}` }])).rejects.toMatchObject({
      code: 'invalid',
      message: expect.stringContaining('confirm_sensitive: true'),
      details: { issues: [{ path: 'body', message: 'Looks like it holds a secret (Dotpad key).' }] },
    });
  });

  it('lets through a secret the text held already', async () => {
    await expect(refusePossibleSecrets([{ path: 'text', text: `Still ${KEY}` }], () => `Was ${KEY}`)).resolves.toBeUndefined();
  });

  it('leaves nothing behind in the process per scan: no performance marks pile up', async () => {
    performance.clearMarks();
    for (let i = 0; i < 20; i++) await refusePossibleSecrets([{ path: 'body', text: `An ordinary post, number ${i}, linking https://example.com/page.` }]);
    expect(performance.getEntriesByType('mark')).toHaveLength(0);
  });
});
