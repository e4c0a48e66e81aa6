/**
 * Named points where the crash tests kill the process (test/e2e/delivery-crash.test.ts):
 * `SERVICE_CRASH_AT=<name>` makes the first arrival at that point SIGKILL the process, as a power
 * cut would, so the test can restart on the same DATA_DIR and check that nothing was lost or sent
 * twice. Unset (always, outside those tests) a point is one string comparison.
 */
const target = process.env.SERVICE_CRASH_AT ?? null

export function crashPoint(name: string): void {
  if (target === name) process.kill(process.pid, 'SIGKILL')
}
