/**
 * Suites that need a program from the operating system (redis-server today; espeak-ng,
 * pocketsphinx and chromium later) declare it here. Where the program is missing, a newcomer's
 * `npm test` stays green: the suite is skipped and the run says so once, naming the program and
 * the command that installs it. CI sets REQUIRE_SYSTEM_BINARIES=1 (.ci/run), under which a
 * missing program fails the suite instead: CI never skips.
 */
import { beforeAll, describe, test } from 'bun:test'

export interface SystemBinary {
  name: string
  /** Where it is, or null when absent. */
  path: string | null
  /** The one command that installs it on Debian/Ubuntu. */
  install: string
}

export const binariesRequired = (): boolean => process.env.REQUIRE_SYSTEM_BINARIES === '1'

const announced = new Set<string>()

/** Finds `name` on PATH, or at `$<override>` when that variable is set. */
export function systemBinary(name: string, install: string, override?: string): SystemBinary {
  const configured = override ? process.env[override] : undefined
  const path = configured ? (Bun.file(configured).size > 0 ? configured : null) : Bun.which(name)
  return { name, path, install }
}

/**
 * `describe` for a suite that needs `binary`: runs it when present (or when required, failing
 * with a clear message if absent), else skips it and says so once per run.
 */
export function describeNeeding(binary: SystemBinary): typeof describe {
  if (binary.path) return describe
  if (binariesRequired()) {
    return ((label: string, body: () => void) =>
      describe(label, () => {
        beforeAll(() => {
          throw new Error(`${binary.name} is required (REQUIRE_SYSTEM_BINARIES=1) but is not on PATH; install it: ${binary.install}`)
        })
        // One test so the failure is counted even when the body declares its tests conditionally.
        test(`${binary.name} is installed`, () => {})
        body()
      })) as typeof describe
  }
  if (!announced.has(binary.name)) {
    announced.add(binary.name)
    console.warn(`skipping the suites that need ${binary.name} (not on PATH); to run them: ${binary.install}`)
  }
  return describe.skip
}

export const REDIS = systemBinary('redis-server', 'apt-get install redis-server', 'REDIS_SERVER')
/** `describe` for suites that start a real redis-server. */
export const describeWithRedis = describeNeeding(REDIS)
