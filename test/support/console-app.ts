/**
 * The console app's browser suites: one service with a scale-plan workspace ("Bean There": an
 * agent that answers and records calls, a shop FAQ, a rented number and three contacts), headless
 * Chromium on one page, and the steps every suite takes (signing in, a sandbox callee, a call
 * placed, a call's status on the Live page). Screenshots go to test-artifacts/console-app/.
 */
import { afterAll, beforeAll, expect } from 'bun:test'
import { join } from 'node:path'
import type { Browser, Page } from 'puppeteer-core'
import { artifactDir, launchChromium } from './browser'
import { startTestServer, type TestServer } from './server'

export const SEC = 1_000
const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.`
/** The workspace's contacts: each a number a test may call. */
export const CONTACTS = ['+14155550901', '+14155550902', '+14155550903']

const shots = artifactDir('console-app')

/** The suite's service, workspace and browser page (set once the file's tests start), and its steps. */
export class ConsoleApp {
  s!: TestServer
  browser!: Browser
  page!: Page
  dev!: { id: string; key: string }
  agent!: string

  /** A full-page screenshot, test-artifacts/console-app/<name>.png. */
  readonly shot = (name: string) => this.page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })

  /** Moves the service clock on. */
  readonly advance = (ms: number) => this.s.console('POST', '/clock/advance', { ms })

  /** Signs in through the form with the console token (the tab keeps it for the file's later pages). */
  readonly signIn = async (): Promise<void> => {
    await this.page.goto(`${this.s.url}/console/app`)
    await this.page.waitForSelector('#signin:not([hidden]) #token')
    await this.page.type('#token', this.s.consoleToken)
    await this.page.keyboard.press('Enter')
    await this.page.waitForSelector('#top:not([hidden]) #workspace')
  }

  /** A sandbox callee at `phone` that rings for 1 s (service clock), says `lines`, and hangs up after a minute. */
  readonly callee = async (phone: string, lines: string[]): Promise<void> => {
    const put = await this.s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: SEC, lines, hangupAfterMs: 60 * SEC })
    expect(put.status).toBe(200)
  }

  /** Places a call from the workspace's agent to `to`; its id. */
  readonly place = async (to: string): Promise<string> => {
    const r = await this.s.api('POST', '/calls', { key: this.dev.key, body: { to, purpose: 'Hi, this is Bean There calling about your order.' } })
    expect(r.status).toBe(202)
    return r.body.id as string
  }

  /** The call's status as its Live card shows it (null while there is no card). */
  readonly statusOf = (id: string) => this.page.$eval(`.card[data-call-id="${id}"] .status-slot .badge`, (b) => b.textContent).catch(() => null)
}

/** Starts the service (`env` added to its settings), the workspace and the browser before the file's tests, and stops them after. */
export function useConsoleApp(env: Record<string, string> = {}): ConsoleApp {
  const app = new ConsoleApp()
  beforeAll(async () => {
    const s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100', ...env })
    app.s = s
    const dev = await s.developer({ plan: 'scale', name: 'Bean There' })
    app.dev = dev
    const agent = (await s.agent(dev.key, { name: 'Bean There', greeting: 'Hello from Bean There!', voice: { answersCalls: true, recordCalls: true } })).id
    app.agent = agent
    expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: FAQ, title: 'Shop FAQ' } })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550900', source: 'rented', agent })).status).toBe(201)
    for (const phone of CONTACTS) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
    app.browser = await launchChromium()
    app.page = await app.browser.newPage()
    await app.page.setViewport({ width: 1280, height: 900 })
  }, 60_000)
  afterAll(async () => {
    await app.browser?.close()
    await app.s?.stop()
  })
  return app
}
