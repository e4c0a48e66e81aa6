/**
 * Named points where the crash tests kill the process (test/e2e/delivery-crash.test.ts):
 * `SERVICE_CRASH_AT=<name>` makes the first arrival at that point SIGKILL the process, as a power
 * cut would, so the test can restart on the same DATA_DIR and check that nothing was lost or sent
 * twice; `<name>@<n>` waits for the n-th arrival (the last of 100 replies). Unset (always, outside
 * those tests) a point is one string comparison.
 */
const spec = process.env.SERVICE_CRASH_AT ?? null
const counted = spec ? /^(.+)@(\d+)$/.exec(spec) : null
const target = counted ? counted[1]! : spec
let arrivals = counted ? Number(counted[2]) : 1

export function crashPoint(name: string): void {
  if (target === name && --arrivals <= 0) process.kill(process.pid, 'SIGKILL')
}
