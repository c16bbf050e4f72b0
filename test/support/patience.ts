/**
 * How long the suites wait, in one place. A test waits on the condition itself (`expect.poll`, a
 * Playwright locator, a promise that settles when the thing happens), never on a fixed sleep, so a
 * fast machine goes on at once. A bound only turns a hang into a failure, so each is generous: a
 * 2-core machine busy with other work meets it, and only a bug misses it. How fast something
 * happens is a timing target, measured by `npm run bench`, never asserted here.
 */

/** For one condition to hold: `expect.poll`'s default (vitest.config.ts) and Playwright's waits. */
export const CONDITION_MS = 60_000;

/** For one test. */
export const TEST_MS = 180_000;

/**
 * For a test tagged `heavy` (one that starts servers in its body: restarts on the embedded store,
 * several instances; or drives a browser), and for a hook, which starts or stops servers and
 * browsers. With a load average of 20 on 2 cores, the SIGKILL restart on PGlite took 165 s.
 */
export const HEAVY_TEST_MS = 600_000;
