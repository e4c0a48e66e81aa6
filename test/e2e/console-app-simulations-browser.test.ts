/**
 * The console app's Simulations page in headless Chromium: a suite made over the v1 API (one
 * scenario, one scripted line, one expectation that holds and one that does not) is listed under
 * its agent; "Run against draft" starts a run and opens it; the run finishes with its call's
 * expectations green and red, in words, with the evidence and links to the call and its recording.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Browser, Page } from 'puppeteer-core'
import { artifactDir, describeWithChromium, launchChromium } from '../support/browser'
import { startTestServer, type TestServer } from '../support/server'

describeWithChromium('the console app: simulations in Chromium', () => {
  let s: TestServer
  let browser: Browser
  let page: Page
  let dev: { id: string; key: string }
  let agent: string
  let suite: string

  beforeAll(async () => {
    s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
    dev = await s.developer({ plan: 'free', name: 'Sims' })
    const api = (path: string, body: unknown) => s.api('POST', path, { key: dev.key, body })
    const made = await api('/agents', { name: 'Bean There', greeting: 'Hello from Bean There!', voice: { answersCalls: true, recordCalls: true } })
    expect(made.status).toBe(201)
    agent = made.body.id
    const scenario = await api('/simulations/scenarios', {
      name: 'Opening hours',
      caller: { lines: [{ say: 'When do you open?' }] },
      expectations: [
        { kind: 'says', text: 'hello from bean there' },
        { kind: 'ended', by: 'agent' },
      ],
    })
    expect(scenario.status).toBe(201)
    const made2 = await api('/simulations/suites', { name: 'Smoke', agent, scenarios: [scenario.body.id], requiredToPublish: true })
    expect(made2.status).toBe(201)
    suite = made2.body.id
    browser = await launchChromium()
    page = await browser.newPage()
    await page.setViewport({ width: 1280, height: 900 })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await s?.stop()
  })

  test('a suite run against the draft from the app: its call’s expectations green and red, with evidence and links', async () => {
    await page.goto(`${s.url}/console/app`)
    await page.evaluate((token) => sessionStorage.setItem('console-token', token), s.consoleToken)
    await page.goto(`${s.url}/console/app#/${dev.id}/simulations`)
    const card = `section.agent-suites[data-agent-id="${agent}"] section.suite[data-suite-id="${suite}"]`
    await page.waitForSelector(`${card} button.run-draft`)
    expect(await page.$eval(`section.agent-suites[data-agent-id="${agent}"] h2`, (e) => e.textContent)).toBe('Bean There')
    expect(await page.$eval(`${card} .suite-facts`, (e) => e.textContent)).toContain('1 scenario · Gates publishing')
    expect(await page.$eval(card, (e) => e.textContent)).toContain('Never run.')

    await page.click(`${card} button.run-draft`)
    await page.waitForFunction(() => location.hash.includes('/simulation/'))
    const run = decodeURIComponent(page.url().split('/simulation/')[1]!)
    // The page reads the run again until it is done (a call of one line: seconds).
    await page.waitForFunction(() => document.querySelector('.facts .badge.sim')?.textContent === 'failed', { timeout: 90_000 })
    expect(await page.$eval('#page h1', (e) => e.textContent)).toBe('Smoke against draft')
    const rows = await page.$$eval('.sim-result li.expectation', (l) =>
      l.map((x) => ({ passed: (x as HTMLElement).dataset.passed, verdict: x.querySelector('.verdict')!.textContent, evidence: x.querySelector('.evidence')!.textContent })),
    )
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatchObject({ passed: 'true', verdict: '✓ held' })
    expect(rows[0]!.evidence).toContain('Hello from Bean There!')
    expect(rows[1]).toMatchObject({ passed: 'false', verdict: '✗ failed' })
    expect(rows[1]!.evidence).toContain('ended by caller')
    expect(await page.$eval('li.expectation.held', (e) => getComputedStyle(e).borderLeftColor)).toBe('rgb(19, 101, 63)')
    expect(await page.$eval('li.expectation.broken', (e) => getComputedStyle(e).borderLeftColor)).toBe('rgb(164, 22, 26)')

    // The same run over the console API (checked against its schema): the links are the call's page and recording.
    const read = await s.console('GET', `/workspaces/${dev.id}/simulations/runs/${run}`)
    expect(read.body).toMatchObject({ suiteName: 'Smoke', status: 'done', passed: false, target: 'draft', totals: { calls: 1, passed: 0, failed: 1 } })
    const call = read.body.results[0].call
    expect(await page.$eval('.sim-result a.transcript-link', (a) => a.getAttribute('href'))).toBe(`#/${dev.id}/call/${call.id}`)
    const recording = await page.$eval('.sim-result a.recording-link', (a) => (a as HTMLAnchorElement).href)
    expect(new URL(recording).pathname).toBe(new URL(call.recording).pathname)
    expect((await fetch(recording)).headers.get('content-type')).toContain('audio/wav')
    await page.screenshot({ path: join(artifactDir('console-app'), 'simulation-run.png'), fullPage: true })

    // Back on the list, the run is the suite's latest, failed, against the draft; the call's page opens from the run.
    await page.click('.crumbs a')
    await page.waitForSelector(`${card} tr[data-run-id="${run}"]`)
    expect(await page.$$eval(`${card} tr[data-run-id="${run}"] td`, (t) => t.slice(1, 4).map((x) => x.textContent))).toEqual(['failed', 'draft', '0 / 1'])
    await page.goto(`${s.url}/console/app#/${dev.id}/simulation/${run}`)
    await page.waitForSelector('.sim-result a.transcript-link')
    await page.click('.sim-result a.transcript-link')
    await page.waitForFunction((id) => location.hash.endsWith(`/call/${id}`), {}, call.id)
    // A suite of another workspace, or none, is a 404 naming it.
    const none = await s.console('POST', `/workspaces/${dev.id}/simulations/suites/sui_nope/runs`, { target: 'draft' })
    expect(none.status).toBe(404)
  }, 120_000)

  test('the Calls list marks a simulated call, with its run, and filters real calls from simulated ones', async () => {
    const run = (await s.console('GET', `/workspaces/${dev.id}/simulations/suites/${suite}/runs`)).body.items[0]
    const call = (await s.console('GET', `/workspaces/${dev.id}/simulations/runs/${run.id}`)).body.results[0].call
    await page.goto(`${s.url}/console/app#/${dev.id}/calls`)
    const row = `tr[data-call-id="${call.id}"]`
    await page.waitForSelector(`${row} a.badge.simulated`)
    expect(await page.$eval(`${row} a.badge.simulated`, (a) => [a.textContent, a.getAttribute('href')])).toEqual(['simulated', `#/${dev.id}/simulation/${run.id}`])
    await page.select('#f-simulated', 'false')
    await page.click('form.filters button[type="submit"]')
    await page.waitForSelector('td.empty')
    expect(await page.$(row)).toBeNull()
    await page.select('#f-simulated', 'true')
    await page.click('form.filters button[type="submit"]')
    await page.waitForSelector(row)
    expect(decodeURIComponent(page.url())).toContain('simulated=true')
    await page.screenshot({ path: join(artifactDir('console-app'), 'calls-simulated.png'), fullPage: true })
    // Over the console API, the same: the call names its run.
    const listed = await s.console('GET', `/workspaces/${dev.id}/calls?simulated=true`)
    expect(listed.body.items.map((c: any) => [c.id, c.simulation])).toContainEqual([call.id, { runId: run.id, target: 'draft' }])
    expect((await s.console('GET', `/workspaces/${dev.id}/calls?simulated=false`)).body.items).toEqual([])
  }, 30_000)

  test('a website-chat result shows its transcript on the run’s page (a chat has no call page)', async () => {
    const api = (path: string, body: unknown) => s.api('POST', path, { key: dev.key, body })
    const scenario = await api('/simulations/scenarios', { name: 'By chat', channel: 'web', caller: { lines: [{ say: 'When do you open?' }] }, expectations: [{ kind: 'says', text: 'bean there' }] })
    const chatSuite = (await api('/simulations/suites', { name: 'Chat', agent, scenarios: [scenario.body.id] })).body.id
    const run = (await s.console('POST', `/workspaces/${dev.id}/simulations/suites/${chatSuite}/runs`, { target: 'draft' })).body.id
    await page.goto(`${s.url}/console/app#/${dev.id}/simulation/${run}`)
    await page.waitForFunction(() => document.querySelector('.facts .badge.sim')?.textContent === 'passed', { timeout: 30_000 })
    expect(await page.$('.sim-result a.transcript-link')).toBeNull()
    const lines = await page.$$eval('.sim-result details.sim-chat li', (l) => l.map((x) => [(x as HTMLElement).dataset.speaker, x.textContent]))
    expect(lines[0]).toEqual(['agent', 'Agent: Hello from Bean There!'])
    expect(lines[1]).toEqual(['customer', 'Visitor: When do you open?'])
    expect(lines).toHaveLength(3)
  }, 60_000)
})
