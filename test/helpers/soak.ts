/**
 * How many times the crash and scale tests repeat. `npm test` must stay within its 10 minutes on
 * 2 cores, so by default each repeats enough to reach every kind of moment it aims at (a kill while
 * starting, mid-upload, mid-conversion…) a few times. QUIRE_TEST_SOAK=1 runs the counts the issues
 * named when these tests were written (20 kills each, 200 uploads in the cluster): run it before a
 * release, or after touching jobs, uploads or the converters' sandbox.
 */
/** `full` in a soak run, `quick` otherwise. */
export function soak(full: number, quick: number): number {
  return process.env.QUIRE_TEST_SOAK === "1" ? full : quick;
}
