/**
 * Headless Chromium for the widget's browser tests: Debian's `chromium` driven by puppeteer-core
 * through its executablePath (no browser download). Suites use `describeWithChromium` (skipped
 * with a notice where it is absent, failed under REQUIRE_SYSTEM_BINARIES=1) and keep screenshots
 * under test-artifacts/ (gitignored).
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import puppeteer, { type Browser } from 'puppeteer-core'
import { describeNeeding, systemBinary } from './system-binary'

export const CHROMIUM = systemBinary('chromium', 'apt-get install chromium', 'CHROMIUM')
export const describeWithChromium = describeNeeding(CHROMIUM)

export const ARTIFACTS = join(import.meta.dir, '..', '..', 'test-artifacts')

export function artifactDir(name: string): string {
  const dir = join(ARTIFACTS, name)
  mkdirSync(dir, { recursive: true })
  return dir
}

export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM.path!,
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--mute-audio', ...extraArgs],
  })
}
