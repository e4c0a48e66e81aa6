/**
 * The console app's Agents pages in headless Chromium: the list (published version, numbers, calls
 * today), and one agent — its settings edited into the draft (a refusal shown beside the form,
 * naming the member, what was typed kept), a publish refused by the suite that gates it until a
 * run of that suite passes inline, the versions with what each changed, a diff, test chat against
 * the draft, a rollback and an unpublish. Every move is the API's: the answers are checked there.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Browser, Page } from 'puppeteer-core'
import { artifactDir, describeWithChromium, launchChromium } from '../support/browser'
import { startTestServer, type TestServer } from '../support/server'

/** A long name: the workspace picker shows it whole. */
const WORKSPACE = 'Bean There Coffee Roasters of North Beach'

describeWithChromium('the console app: agents in Chromium', () => {
  let s: TestServer
  let browser: Browser
  let page: Page
  let dev: { id: string; key: string }
  let agent: string
  const shot = (name: string) => page.screenshot({ path: join(artifactDir('console-app'), `${name}.png`), fullPage: true })
  const text = (sel: string) => page.$eval(sel, (e) => e.textContent)
  const waitText = (sel: string, want: string, timeout = 10_000) => page.waitForFunction((q, w) => document.querySelector(q)?.textContent?.includes(w), { timeout }, sel, want)

  beforeAll(async () => {
    s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
    dev = await s.developer({ plan: 'scale', name: WORKSPACE })
    const api = (path: string, body: unknown) => s.api('POST', path, { key: dev.key, body })
    agent = (
      await api('/agents', {
        name: 'Bean There',
        greeting: 'Hello from Bean There!',
        instructions: 'Answer questions about the shop.',
        transfers: [{ name: 'Billing team', phoneNumber: '+14155550199', whenToUse: 'The caller asks about a bill.' }],
        voice: { answersCalls: true },
      })
    ).body.id
    expect((await api(`/agents/${agent}/knowledge`, { text: 'We open at 7 am.', title: 'Shop FAQ' })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550900', source: 'rented', agent })).status).toBe(201)
    await s.publish(dev.key, agent)
    const scenario = await api('/simulations/scenarios', { name: 'By chat', channel: 'web', caller: { lines: [{ say: 'When do you open?' }] }, expectations: [{ kind: 'says', text: 'bean there' }] })
    expect((await api('/simulations/suites', { name: 'Smoke', agent, scenarios: [scenario.body.id], requiredToPublish: true })).status).toBe(201)
    browser = await launchChromium()
    page = await browser.newPage()
    await page.setViewport({ width: 1280, height: 900 })
    await page.goto(`${s.url}/console/app`)
    await page.evaluate((token) => sessionStorage.setItem('console-token', token), s.consoleToken)
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await s?.stop()
  })

  test('the list: each agent with its published version, numbers, calls today and last change', async () => {
    await page.goto(`${s.url}/console/app#/${dev.id}/agents`)
    const row = `tr[data-agent-id="${agent}"]`
    await page.waitForSelector(row)
    expect(await page.$eval(`${row} th a`, (a) => a.textContent)).toBe('Bean There')
    expect(await text(`${row} td[data-col="published"]`)).toBe('v1')
    expect(await text(`${row} td[data-col="numbers"]`)).toBe('+14155550900')
    expect(await text(`${row} td[data-col="calls"]`)).toBe('0')
    expect(await page.$eval('nav a[data-page="agents"]', (a) => a.getAttribute('aria-current'))).toBe('page')
    await shot('agents')
    // The workspace picker shows the whole name: the text fits its box.
    const picker = await page.$eval('#workspace', (el) => {
      const select = el as HTMLSelectElement
      const probe = document.createElement('span')
      probe.style.font = getComputedStyle(select).font
      probe.style.whiteSpace = 'pre'
      probe.textContent = select.selectedOptions[0]!.textContent
      document.body.append(probe)
      const text = probe.getBoundingClientRect().width
      probe.remove()
      // The arrow and the padding take about 30 px of the box.
      return { shown: select.selectedOptions[0]!.textContent, fits: text + 30 <= select.clientWidth, oneLine: document.getElementById('top')!.getBoundingClientRect().height < 70 }
    })
    expect(picker).toEqual({ shown: WORKSPACE, fits: true, oneLine: true })
    await page.click(`${row} th a`)
    await page.waitForFunction((id) => location.hash.endsWith(`/agent/${id}`), {}, agent)
  }, 30_000)

  test('settings: a refusal names the member beside the form and keeps what was typed; a good edit goes to the draft', async () => {
    await page.waitForSelector('form.agent-settings [data-member="voice.speed"]')
    expect(await page.$eval('#page h1', (e) => e.textContent)).toBe('Bean There')
    expect(await page.$eval('[data-member="greeting"]', (e) => (e as HTMLInputElement).value)).toBe('Hello from Bean There!')
    expect(await page.$eval('[data-member="transfers[0].phoneNumber"]', (e) => (e as HTMLInputElement).value)).toBe('+14155550199')
    expect(await text('ul.knowledge')).toContain('Shop FAQ')
    expect(await page.$eval('[data-member="voice.patience.level"]', (e) => (e as HTMLSelectElement).value)).toBe('normal')

    await page.type('[data-member="voice.speed"]', '2')
    await page.click('form.agent-settings button[type="submit"]')
    await waitText('.form-error', 'voice.speed')
    const api = await s.api('PATCH', `/agents/${agent}`, { key: dev.key, body: { voice: { speed: 2 } } })
    expect(await text('.form-error')).toBe(`Not saved: ${api.body.error}`)
    expect(await page.$eval('[data-member="voice.speed"]', (e) => [e.getAttribute('aria-invalid'), (e as HTMLInputElement).value, document.activeElement === e])).toEqual(['true', '2', true])

    // A transfer's bad number is marked on its own row.
    await page.click('form.agent-settings .transfers + button')
    await page.type('[data-member="transfers[1].name"]', 'Manager')
    await page.type('[data-member="transfers[1].phoneNumber"]', 'call me')
    await page.type('[data-member="transfers[1].whenToUse"]', 'The caller is upset.')
    await page.$eval('[data-member="voice.speed"]', (e) => ((e as HTMLInputElement).value = '1.1'))
    await page.click('form.agent-settings button[type="submit"]')
    await waitText('.form-error', 'transfers[1].phoneNumber')
    expect(await page.$eval('[data-member="transfers[1].phoneNumber"]', (e) => e.getAttribute('aria-invalid'))).toBe('true')
    expect(await page.$eval('[data-member="voice.speed"]', (e) => e.getAttribute('aria-invalid'))).toBeNull()
    await shot('agent-refused')

    await page.$eval('[data-member="transfers[1].phoneNumber"]', (e) => ((e as HTMLInputElement).value = '+14155550198'))
    await page.$eval('[data-member="instructions"]', (e) => ((e as HTMLTextAreaElement).value = 'Answer questions about the shop, briefly.'))
    await page.select('[data-member="voice.patience.level"]', 'patient')
    await page.type('[data-member="voice.interruptions.backchannels"]', 'right\nsure thing')
    await page.type('[data-member="voice.voicemailMessage"]', 'Hi {{firstName}}, Bean There here.')
    await page.click('form.agent-settings button[type="submit"]')
    await waitText('form.agent-settings [role="status"]', 'Saved to the draft')
    const draft = (await s.api('GET', `/agents/${agent}`, { key: dev.key })).body
    expect(draft.voice).toMatchObject({ speed: 1.1, patience: { level: 'patient', waitMs: null }, interruptions: { backchannels: ['right', 'sure thing'] } })
    expect(draft.transfers.map((t: any) => t.phoneNumber)).toEqual(['+14155550199', '+14155550198'])
    expect(draft.instructions).toBe('Answer questions about the shop, briefly.')
    expect(draft.voice.voicemailMessage).toBe('Hi {{firstName}}, Bean There here.')
    await waitText('.versions .publication', 'The draft changes: core, tools, voice')
  }, 30_000)

  test('versions: the draft’s diff, a publish the gating suite refuses until its run passes inline, then v2 with what it changed', async () => {
    await page.click('.versions button.draft-diff')
    await page.waitForSelector('.diff-out table.diff tr[data-field="core.instructions"]')
    expect(await text('.diff-out tr[data-field="core.instructions"] td.new')).toBe('Answer questions about the shop, briefly.')

    await page.click('.versions button.publish')
    await page.waitForSelector('.versions p.error:not([hidden])')
    const refused = await text('.versions p.error')
    expect(refused).toStartWith('Not published: ')
    expect(refused).toContain('Smoke')

    await page.waitForSelector('#suite-pick option')
    await page.click('.try-part button:not([disabled])[type="button"]:not(.quiet)')
    await page.waitForSelector('.run-outcome[data-outcome="passed"]', { timeout: 60_000 })
    expect(await text('.suite-run li.expectation')).toContain('✓ held')

    await page.type('#publish-summary', 'Patient, with a manager')
    await page.click('.versions button.publish')
    await waitText('.versions .publication', 'Serving v2')
    expect(await text('.versions tr[data-version="2"] td[data-col="changed"]')).toBe('core, tools, voice')
    expect(await text('.versions tr[data-version="2"] th')).toContain('Patient, with a manager')
    expect(await text('.versions tr[data-version="2"] td.mono')).toBe('console')
    expect(await text('.versions tr[data-version="1"] td[data-col="changed"]')).toBe('first version')

    // Published, the draft's diff is gone: it compared with a version no longer served.
    expect(await page.$('.diff-out table')).toBeNull()
    await page.click('.versions button.compare')
    await waitText('.diff-out h3', 'v1 → v2')
    expect(await page.$('.diff-out tr[data-field="voice.speed"]')).not.toBeNull()
    await shot('agent')
  }, 90_000)

  test('test chat talks to the draft; a rollback restores v1 into the draft and publishes it; unpublish', async () => {
    await page.type('#test-message', 'When do you open?')
    await page.click('form.test-chat button[type="submit"]')
    await page.waitForSelector('.test-chat-lines li[data-speaker="agent"]')
    expect(await text('.test-chat-lines li[data-speaker="customer"]')).toBe('You: When do you open?')
    expect((await text('.test-chat-lines li[data-speaker="agent"]')).length).toBeGreaterThan('Agent: '.length)

    await page.click('.versions tr[data-version="1"] button')
    await waitText('.versions .publication', 'Serving v4')
    expect(await text('.versions tr[data-version="3"] td:nth-of-type(1)')).toBe('backup')
    expect(await page.$eval('[data-member="instructions"]', (e) => (e as HTMLTextAreaElement).value)).toBe('Answer questions about the shop.')
    expect(await page.$eval('[data-member="voice.speed"]', (e) => (e as HTMLInputElement).value)).toBe('')

    await page.click('.versions button.danger')
    await waitText('.versions .publication', 'Not published')
    expect(await page.$eval('.versions button.danger', (b) => (b as HTMLButtonElement).disabled)).toBe(true)
    const list = await s.console('GET', `/workspaces/${dev.id}/agents`)
    expect(list.body.items[0]).toMatchObject({ status: 'draft', publishedVersion: null })
  }, 30_000)
})
