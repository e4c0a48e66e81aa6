/**
 * The console app in headless Chromium (Debian's package, through puppeteer-core): sign in with the
 * console token, pick the workspace, watch a sandbox call go from ringing to completed on the Live
 * page with its transcript growing, open its page (recording with waveform, latency chart,
 * summary, events), draw the call machine with a live call's state marked as it moves, end that
 * call from the Live page, and take
 * over a website conversation and a chat-app one and reply from the inbox. Screenshots of each page go to
 * test-artifacts/console-app/.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Browser, Page } from 'puppeteer-core'
import { messagingFeature } from '../../src/features/messaging'
import { artifactDir, describeWithChromium, launchChromium } from '../support/browser'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.`

describeWithChromium('the console app in Chromium', () => {
  let s: TestServer
  let browser: Browser
  let page: Page
  let dev: { id: string; key: string }
  let agent: string
  const shots = artifactDir('console-app')
  const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
  const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })

  beforeAll(async () => {
    s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
    dev = await s.developer({ plan: 'scale', name: 'Bean There' })
    agent = (await s.agent(dev.key, { name: 'Bean There', greeting: 'Hello from Bean There!', voice: { answersCalls: true, recordCalls: true } })).id
    expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: FAQ, title: 'Shop FAQ' } })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550900', source: 'rented', agent })).status).toBe(201)
    for (const phone of ['+14155550901', '+14155550902']) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
    browser = await launchChromium()
    page = await browser.newPage()
    await page.setViewport({ width: 1280, height: 900 })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await s?.stop()
  })

  /** A sandbox callee at `phone` that rings for 1 s (service clock), says `lines`, and hangs up after a minute. */
  const callee = async (phone: string, lines: string[]) =>
    expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: SEC, lines, hangupAfterMs: 60 * SEC })).status).toBe(200)
  const place = async (to: string) => {
    const r = await s.api('POST', '/calls', { key: dev.key, body: { to, purpose: 'Hi, this is Bean There calling about your order.' } })
    expect(r.status).toBe(202)
    return r.body.id as string
  }
  const statusOf = (id: string) => page.$eval(`.card[data-call-id="${id}"] .status-slot .badge`, (b) => b.textContent).catch(() => null)
  const linesOf = (id: string) => page.$$eval(`.card[data-call-id="${id}"] .transcript li`, (l) => l.length)

  test('sign in, then a sandbox call goes from ringing to completed on the Live page, its transcript growing', async () => {
    await page.goto(`${s.url}/console/app`)
    await page.waitForSelector('#signin:not([hidden]) #token')
    expect(await page.$eval('label[for="token"]', (l) => l.textContent)).toBe('Console token')
    await shot('sign-in')
    // A wrong token is refused and nothing is kept.
    await page.type('#token', 'not-the-token')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => document.getElementById('signin-error')!.textContent!.includes('not the console token'))
    expect(await page.evaluate(() => sessionStorage.getItem('console-token'))).toBeNull()
    await page.$eval('#token', (i) => ((i as HTMLInputElement).value = ''))
    await page.type('#token', s.consoleToken)
    await page.keyboard.press('Enter')
    await page.waitForSelector('#top:not([hidden]) #workspace')
    // The token stays in the tab's session, never in the address.
    expect(await page.evaluate(() => sessionStorage.getItem('console-token'))).toBe(s.consoleToken)
    expect(page.url()).not.toContain(s.consoleToken)
    await page.select('#workspace', dev.id)
    await page.waitForFunction((ws) => location.hash === `#/${ws}/live`, {}, dev.id)
    await page.waitForSelector('#stream-state[data-state="live"]')

    await callee('+14155550901', ['What time do you open on Sunday?', 'Thank you, bye.'])
    const id = await place('+14155550901')
    await page.waitForSelector(`.card[data-call-id="${id}"]`)
    expect(await statusOf(id)).toBe('ringing')
    await shot('live-ringing')
    await advance(SEC) // the callee picks up
    await until(
      'connected on the page',
      () => statusOf(id),
      (v) => v === 'connected',
      10_000,
    )
    // The transcript grows line by line as the call goes on.
    const counts: number[] = []
    await until(
      'the transcript grows',
      async () => {
        const n = await linesOf(id)
        if (counts[counts.length - 1] !== n) counts.push(n)
        return n
      },
      (n) => n >= 4,
      60_000,
    )
    expect(counts.length).toBeGreaterThan(2)
    expect(counts).toEqual([...counts].sort((a, b) => a - b))
    const pipeline = await page.$eval(`.card[data-call-id="${id}"] .pipeline-slot .badge`, (b) => b.textContent)
    expect(['opening', 'listening', 'thinking', 'speaking', 'interrupted']).toContain(pipeline!)
    const first = await page.$eval(`.card[data-call-id="${id}"] .transcript li .text`, (t) => t.textContent)
    expect(first).toBe('Hi, this is Bean There calling about your order.')
    await shot('live-connected')
    await advance(61 * SEC) // the callee hangs up
    await until(
      'completed on the page',
      () => statusOf(id),
      (v) => v === 'completed',
      20_000,
    )
    expect(await page.$eval(`.cards.ended .card[data-call-id="${id}"]`, (c) => !!c)).toBe(true)
    await shot('live-ended')

    // The call's page: transcript, recording and waveform, latency per turn, summary, events.
    await page.click(`.card[data-call-id="${id}"] h3 a`)
    await page.waitForFunction((callId) => location.hash.endsWith(`/call/${callId}`), {}, id)
    await page.waitForSelector('.recording audio', { timeout: 20_000 })
    await page.waitForFunction(() => [...document.querySelectorAll('.summary')].some((p) => p.textContent && !p.textContent.startsWith('Written after')), { timeout: 20_000 })
    const lines = await page.$$eval('.transcript.full li .speaker', (l) => l.map((x) => x.textContent))
    expect(lines.slice(0, 2)).toEqual(['Agent', 'Caller'])
    const audio = await page.$eval('.recording audio', (a) => (a as HTMLAudioElement).src)
    expect(audio).toStartWith('blob:')
    // The waveform is drawn: some pixels of the canvas are not blank.
    const inked = await page.$eval('canvas.waveform', (c) => {
      const canvas = c as HTMLCanvasElement
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data
      let n = 0
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++
      return n
    })
    expect(inked).toBeGreaterThan(100)
    expect(await page.$eval('canvas.waveform', (c) => c.getAttribute('aria-label'))).toContain('Waveform of the recording')
    const turns = await page.$$eval('svg.latency-chart rect.stage', (r) => r.length)
    expect(turns).toBeGreaterThanOrEqual(4) // stages of at least the turns the callee spoke
    await page.waitForFunction(() => [...document.querySelectorAll('table caption')].some((c) => c.textContent === 'Events'), { timeout: 10_000 })
    const events = await page.$$eval('table.list.compact tbody td:nth-child(2)', (t) => t.map((x) => x.textContent))
    expect(events).toContain('call.completed')
    await shot('call')

    // The calls list shows it, and filters by status.
    await page.goto(`${s.url}/console/app#/${dev.id}/calls?status=completed`)
    await page.waitForSelector(`tr[data-call-id="${id}"]`)
    await shot('calls')
  }, 150_000)

  test('the call machine is drawn with a live call’s state marked as it moves; the call is ended from the Live page', async () => {
    await callee('+14155550902', ['Hello?'])
    const id = await place('+14155550902')
    await page.goto(`${s.url}/console/app#/${dev.id}/charts?machine=call&actor=call:${id}`)
    await page.waitForSelector('svg.chart g.state', { timeout: 20_000 })
    const states = await page.$$eval('svg.chart g.state', (g) => g.map((x) => x.getAttribute('data-state')))
    expect(states).toEqual(expect.arrayContaining(['call.created', 'call.scheduled', 'call.ringing', 'call.connected', 'call.completed', 'call.missed', 'call.failed', 'call.cancelled']))
    const labels = await page.$$eval('svg.chart .edge-label text', (t) => t.map((x) => x.textContent))
    expect(labels).toEqual(expect.arrayContaining(['call.answered', 'call.ended']))
    await page.waitForSelector('svg.chart g.state.current[data-state="call.ringing"]')
    await shot('chart-ringing')
    await page.waitForSelector('#stream-state[data-state="live"]')
    await advance(SEC)
    // The stream moves the mark, no reload.
    await page.waitForSelector('svg.chart g.state.current[data-state="call.connected"]', { timeout: 10_000 })
    expect(await page.$$eval('svg.chart g.state.current', (g) => g.length)).toBe(1)
    expect(await page.$eval('.current-state', (p) => p.textContent)).toBe(`call:${id} is in state connected`)
    await shot('chart')
    // Ended from the Live page: the call completes (hang-up: cancelled), seen there and on the chart.
    const chart = page.url()
    await page.goto(`${s.url}/console/app#/${dev.id}/live`)
    await page.waitForSelector(`.card[data-call-id="${id}"] button.end:not([hidden])`)
    await page.click(`.card[data-call-id="${id}"] button.end`)
    await until(
      'completed on the page',
      () => statusOf(id),
      (v) => v === 'completed',
      10_000,
    )
    expect((await s.api('GET', `/calls/${id}`, { key: dev.key })).body).toMatchObject({ status: 'completed', hangup: 'cancelled' })
    await page.goto(chart)
    await page.waitForSelector('svg.chart g.state.current[data-state="call.completed"]', { timeout: 20_000 })
  }, 60_000)

  test('the inbox: a website conversation taken over and answered by a teammate', async () => {
    const inbound = await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'web', from: 'visitor-7', text: 'Do you roast your own beans?' })
    expect(inbound.status).toBe(201)
    const conversation = inbound.body.conversationId as string
    await page.goto(`${s.url}/console/app#/${dev.id}/inbox`)
    await page.waitForSelector(`li[data-conversation-id="${conversation}"] a`)
    await page.click(`li[data-conversation-id="${conversation}"] a`)
    await page.waitForFunction(() => [...document.querySelectorAll('.messages .message.customer .text')].some((t) => t.textContent === 'Do you roast your own beans?'))
    await page.click('button[data-action="takeover"]')
    await page.waitForFunction(() => document.querySelector('.conversation-state .badge.conversation')?.textContent === 'handled')
    expect((await s.console('GET', `/workspaces/${dev.id}/conversations/${conversation}`)).body.status).toBe('handled')
    await page.focus('#reply')
    await page.keyboard.type('Yes, every morning in the shop. Maya, from the team.')
    await page.click('form.reply button[type="submit"]')
    await page.waitForFunction(() => [...document.querySelectorAll('.messages .message.teammate .text')].some((t) => t.textContent === 'Yes, every morning in the shop. Maya, from the team.'))
    const stored = await s.console('GET', `/workspaces/${dev.id}/conversations/${conversation}/messages`)
    expect(stored.body.items[0]).toMatchObject({ author: 'teammate' })
    await shot('inbox')
    await page.click('button[data-action="resolve"]')
    await page.waitForFunction(() => document.querySelector('.conversation-state .badge.conversation')?.textContent === 'resolved')
  }, 60_000)

  test('the inbox: a chat-app conversation taken over and answered on the platform', async () => {
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550910', source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
    const inbound = await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'chatapp', from: '+14155550911', to: '+14155550910', text: 'Can I order beans for pickup?' })
    expect(inbound.status).toBe(201)
    const conversation = inbound.body.conversationId as string
    await page.goto(`${s.url}/console/app#/${dev.id}/inbox/${conversation}`)
    await page.waitForFunction(() => [...document.querySelectorAll('.messages .message.customer .text')].some((t) => t.textContent === 'Can I order beans for pickup?'))
    await page.waitForFunction(() => document.getElementById('reply-hint')?.textContent?.includes('24-hour window'))
    await page.click('button[data-action="takeover"]')
    await page.waitForFunction(() => document.querySelector('.conversation-state .badge.conversation')?.textContent === 'handled')
    await page.focus('#reply')
    await page.keyboard.type('Yes: tell me the blend and I will have it ready. Maya')
    await page.click('form.reply button[type="submit"]')
    await page.waitForFunction(() => [...document.querySelectorAll('.messages .message.teammate .text')].some((t) => t.textContent === 'Yes: tell me the blend and I will have it ready. Maya'))
    const sandbox = s.server.services.of(messagingFeature).sandbox
    expect(sandbox.sent.filter((m) => m.to === '+14155550911').at(-1)).toMatchObject({ from: '+14155550910', content: { type: 'text', text: 'Yes: tell me the blend and I will have it ready. Maya' } })
    await shot('inbox-chatapp')
  }, 60_000)

  test('campaigns list with their counts', async () => {
    const made = await s.console('POST', `/workspaces/${dev.id}/campaigns`, {
      agent,
      name: 'Sunday hours',
      kind: 'voice',
      purpose: 'Hi, Bean There here: we now open on Sundays.',
      recipients: ['+14155550901', '+14155550902'],
    })
    expect(made.status).toBe(201)
    await page.goto(`${s.url}/console/app#/${dev.id}/campaigns`)
    await page.waitForSelector(`tr[data-campaign-id="${made.body.id}"] td[data-count="recipients"]`)
    expect(await page.$eval(`tr[data-campaign-id="${made.body.id}"] td[data-count="recipients"]`, (t) => t.textContent)).toBe('2')
    await shot('campaigns')
  }, 30_000)

  test('keyboard: the skip link and the pages are reachable with Tab, and every form control has a label', async () => {
    await page.goto('about:blank')
    await page.goto(`${s.url}/console/app#/${dev.id}/calls`)
    await page.waitForSelector('form.filters')
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content')
    const unlabelled = await page.$$eval('input, select, textarea', (els) =>
      els.filter((e) => !(e as HTMLElement).closest('[hidden]') && !e.getAttribute('aria-label') && !(e.id && document.querySelector(`label[for="${e.id}"]`))).map((e) => e.outerHTML),
    )
    expect(unlabelled).toEqual([])
    // Enter on the skip link moves on to the page; Tab from there reaches the first filter.
    await page.keyboard.press('Enter')
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-status')
  }, 30_000)
})
