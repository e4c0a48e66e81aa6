/**
 * The console app's replays in headless Chromium: on a recorded call's page, "Make a test from this
 * call" makes a scenario whose caller replays the call; a run of it shows, per caller turn, the
 * recorded audio it played (loaded under the console token) beside the new agent's answer.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'puppeteer-core'
import { describeWithChromium, launchChromium } from '../support/browser'
import { startTestServer, type TestServer } from '../support/server'
import { runSuite } from '../support/simulations'

describeWithChromium('the console app: a test made from a call, in Chromium', () => {
  let s: TestServer
  let browser: Browser
  let page: Page
  let dev: { id: string; key: string }
  let agent: string
  let callId: string

  const post = async (path: string, body: unknown) => {
    const r = await s.api('POST', path, { key: dev.key, body })
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return r.body
  }

  beforeAll(async () => {
    s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
    dev = await s.developer({ plan: 'free', name: 'Replays' })
    agent = (await post('/agents', { name: 'Bean There', greeting: 'Hello from Bean There!', voice: { answersCalls: true, recordCalls: true } })).id
    const scripted = await post('/simulations/scenarios', { name: 'Two turns', caller: { lines: [{ say: 'When do you open?' }, { say: 'Thank you.' }] } })
    const suite = await post('/simulations/suites', { name: 'Source', agent, scenarios: [scripted.id] })
    callId = (await runSuite(s, dev.key, suite.id)).results[0].call.id
    browser = await launchChromium()
    page = await browser.newPage()
    await page.setViewport({ width: 1280, height: 900 })
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await s?.stop()
  })

  test('make a test from a call, run it, hear each replayed turn beside the new answer', async () => {
    await page.goto(`${s.url}/console/app`)
    await page.evaluate((token) => sessionStorage.setItem('console-token', token), s.consoleToken)
    await page.goto(`${s.url}/console/app#/${dev.id}/call/${callId}`)
    await page.waitForSelector('button.make-test:not([hidden])')
    await page.click('button.make-test')
    await page.waitForFunction(() => document.querySelector('.made-test')?.textContent?.startsWith('Scenario scn_'))
    const made = await page.$eval('.made-test', (e) => e.textContent ?? '')
    expect(made).toContain('2 caller turns replayed')
    const scenario = /scn_[0-9a-z]+/.exec(made)![0]

    const suite = await post('/simulations/suites', { name: 'Replays', agent, scenarios: [scenario] })
    const run = await runSuite(s, dev.key, suite.id)
    expect(run.results[0].status).toBe('passed')
    await page.goto(`${s.url}/console/app#/${dev.id}/simulation/${run.id}`)
    await page.waitForSelector('details.replayed summary')
    await page.click('details.replayed summary')
    const turns = await page.$$eval('li.replayed-turn', (items) => items.map((li) => li.textContent ?? ''))
    expect(turns).toHaveLength(2)
    expect(turns[0]).toContain('Caller: When do you open?')
    expect(turns[0]).toContain('Agent: ')
    expect(turns[1]).toContain('Caller: Thank you.')
    await page.click('li.replayed-turn button.hear-turn')
    await page.waitForSelector('li.replayed-turn audio:not([hidden])')
    expect(await page.$eval('li.replayed-turn audio', (a) => (a as HTMLAudioElement).src)).toStartWith('blob:')
  }, 150_000)
})
