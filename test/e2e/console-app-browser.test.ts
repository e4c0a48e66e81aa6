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
import { callsFeature } from '../../src/features/calls'
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
  /** The call the first test watches end: its voice conversation is read in the inbox later. */
  let endedCall = ''
  const shots = artifactDir('console-app')
  const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
  const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })

  beforeAll(async () => {
    s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
    dev = await s.developer({ plan: 'scale', name: 'Bean There' })
    agent = (await s.agent(dev.key, { name: 'Bean There', greeting: 'Hello from Bean There!', voice: { answersCalls: true, recordCalls: true } })).id
    expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: FAQ, title: 'Shop FAQ' } })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550900', source: 'rented', agent })).status).toBe(201)
    for (const phone of ['+14155550901', '+14155550902', '+14155550903']) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
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
    // A ringing call's timer says so; the pill of who is speaking waits for the call to be answered.
    await page.waitForFunction((callId) => /^ringing \d+:\d\d$/.test(document.querySelector(`.card[data-call-id="${callId}"] .timer`)?.textContent ?? ''), {}, id)
    // On a 1280 px screen a card takes half the width, not a third: a transcript line reads as a sentence.
    const width = await page.$eval(`.card[data-call-id="${id}"]`, (c) => c.getBoundingClientRect().width)
    expect(width).toBeGreaterThan(500)
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
    // Who has the floor, in words (the pipeline's own state name stays in data-value).
    const pill = await page.$eval(`.card[data-call-id="${id}"] .pipeline-slot .badge`, (b) => ({ words: b.textContent, state: (b as HTMLElement).dataset.value }))
    const words: Record<string, string> = {
      opening: 'Agent greeting',
      listening: 'Waiting for caller',
      callerSpeaking: 'Caller speaking',
      maybeDone: 'Caller paused',
      thinking: 'Agent thinking',
      speaking: 'Agent speaking',
      interrupted: 'Caller interrupting',
    }
    expect(pill.words).toBe(words[pill.state!]!)
    // The timer runs from the answer: minutes and seconds.
    expect(await page.$eval(`.card[data-call-id="${id}"] .timer`, (t) => t.textContent)).toMatch(/^\d+:\d\d$/)
    const first = await page.$eval(`.card[data-call-id="${id}"] .transcript li .text`, (t) => t.textContent)
    expect(first).toBe('Hi, this is Bean There calling about your order.')
    // The transcript is a scroll box showing its newest line whole; scrolled to its top, the first line is whole too.
    const view = await page.$eval(`.card[data-call-id="${id}"] .transcript`, (list) => {
      const box = list.getBoundingClientRect()
      const last = list.lastElementChild!.getBoundingClientRect()
      list.scrollTop = 0
      const top = list.firstElementChild!.getBoundingClientRect()
      list.scrollTop = list.scrollHeight
      return { overflow: getComputedStyle(list).overflowY, lastInside: last.top >= box.top - 1 && last.bottom <= box.bottom + 1, firstInside: top.top >= box.top - 1 }
    })
    expect(view).toEqual({ overflow: 'auto', lastInside: true, firstInside: true })
    await shot('live-connected')
    await advance(61 * SEC) // the callee hangs up
    await until(
      'completed on the page',
      () => statusOf(id),
      (v) => v === 'completed',
      20_000,
    )
    expect(await page.$eval(`.cards.ended .card[data-call-id="${id}"]`, (c) => !!c)).toBe(true)
    endedCall = id
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
    // Its axes: turns named down the side, milliseconds along the bottom with round ticks from 0.
    const axes = await page.$eval('svg.latency-chart', (svg) => ({
      titles: [...svg.querySelectorAll('.axis-title')].map((t) => t.textContent),
      ticks: [...svg.querySelectorAll('.tick')].map((t) => Number(t.textContent)),
    }))
    expect(axes.titles).toEqual(['Turn', 'ms after the caller stopped speaking'])
    expect(axes.ticks.length).toBeGreaterThanOrEqual(3)
    expect(axes.ticks[0]).toBe(0)
    expect(axes.ticks).toEqual([...axes.ticks].sort((a, b) => a - b))
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
    // No two transitions run along the same stretch of line, no two labels overlap, and each label sits on its own line.
    expect(await page.evaluate(chartGeometry)).toEqual({ sharedStretches: [], overlappingLabels: 0, labelsOffTheirLine: [] })
    // The call to follow is picked from a list of the live ones (the one in the address chosen).
    await page.waitForFunction((callId) => (document.getElementById('actor') as HTMLSelectElement).value === `call:${callId}`, {}, id)
    expect(await page.$eval('#actor', (el) => (el as HTMLSelectElement).tagName)).toBe('SELECT')
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

  test('the state charts: an actor to follow is picked from a list, not typed', async () => {
    await callee('+14155550903', ['Hello?'])
    const id = await place('+14155550903')
    await page.goto(`${s.url}/console/app#/${dev.id}/charts?machine=call`)
    await page.waitForSelector(`#actor option[value="call:${id}"]`)
    await page.select('#actor', `call:${id}`)
    await page.click('form.filters button[type="submit"]')
    await page.waitForSelector('svg.chart g.state.current[data-state="call.ringing"]', { timeout: 20_000 })
    expect(decodeURIComponent(page.url())).toContain(`actor=call:${id}`)
    // Another machine lists its own actors: the workspace's campaigns.
    const made = await s.console('POST', `/workspaces/${dev.id}/campaigns`, { agent, name: 'Chart me', kind: 'voice', purpose: 'Hi from Bean There.', recipients: ['+14155550903'] })
    expect(made.status).toBe(201)
    await page.select('#machine', 'campaign')
    await page.waitForSelector(`#actor option[value="campaign:${made.body.id}"]`)
    await page.select('#actor', `campaign:${made.body.id}`)
    await page.click('form.filters button[type="submit"]')
    await page.waitForSelector('svg.chart g.state.current[data-state="campaign.draft"]', { timeout: 20_000 })
    expect(await page.evaluate(chartGeometry)).toEqual({ sharedStretches: [], overlappingLabels: 0, labelsOffTheirLine: [] })
    await s.console('DELETE', `/workspaces/${dev.id}/calls/${id}`)
    expect((await s.api('POST', `/campaigns/${made.body.id}/cancel`, { key: dev.key })).status).toBe(200)
  }, 60_000)

  test('the inbox: a website conversation taken over and answered by a teammate', async () => {
    const inbound = await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'web', from: 'visitor-7', text: 'Do you roast your own beans?' })
    expect(inbound.status).toBe(201)
    const conversation = inbound.body.conversationId as string
    await page.goto(`${s.url}/console/app#/${dev.id}/inbox`)
    await page.waitForSelector(`li[data-conversation-id="${conversation}"] a`)
    // The row says who (a visitor with no contact: their id, not the same words on every row) and what was said last.
    const row = await page.$eval(`li[data-conversation-id="${conversation}"]`, (li) => ({ who: li.querySelector('.who')?.textContent, preview: li.querySelector('.preview')?.textContent ?? '' }))
    expect(row.who).toBe('Website visitor visitor-7')
    expect(row.preview.length).toBeGreaterThan(0)
    expect(row.preview).not.toBe('No message yet.')
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
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550911', name: 'Sam Rivera', email: 'sam@example.com' })).status).toBe(201)
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
    // The row names the contact, with their number and address.
    await page.waitForFunction((c) => document.querySelector(`li[data-conversation-id="${c}"] .who`)?.textContent === 'Sam Rivera', {}, conversation)
    expect(await page.$eval(`li[data-conversation-id="${conversation}"] .reach`, (e) => e.textContent)).toBe('+14155550911 · sam@example.com')
    await shot('inbox-chatapp')
    // A day later the customer's 24-hour window has closed: the form is greyed and says why (the list refreshes every 3 s).
    expect((await s.console('POST', '/clock/advance', { ms: 25 * 3600 * SEC })).status).toBe(200)
    await page.waitForSelector('form.reply.closed textarea:disabled', { timeout: 10_000 })
    expect(await page.$eval('form.reply button[type="submit"]', (b) => (b as HTMLButtonElement).disabled)).toBe(true)
    expect(await page.$eval('#reply-hint', (p) => p.textContent)).toContain('24-hour window closed')
    await shot('inbox-window-closed')
  }, 60_000)

  test('the inbox: the voice conversation of an ended call is resolved and offers no take over', async () => {
    const call = await s.console('GET', `/workspaces/${dev.id}/calls/${endedCall}`)
    const conversation = call.body.conversationId as string
    await page.goto(`${s.url}/console/app#/${dev.id}/inbox/${conversation}?channel=voice`)
    await page.waitForFunction(() => document.querySelector('.conversation-state .badge.conversation')?.textContent === 'resolved')
    expect(await page.$eval('button[data-action="takeover"]', (b) => (b as HTMLElement).hidden)).toBe(true)
    expect(await page.$eval('.conversation-state', (p) => p.textContent)).toContain('the call has ended')
    // Its row: the number called, and the call's last words.
    const row = await page.$eval(`li[data-conversation-id="${conversation}"]`, (li) => ({ who: li.querySelector('.who')?.textContent, status: li.querySelector('.badge.conversation')?.textContent }))
    expect(row).toEqual({ who: '+14155550901', status: 'resolved' })
    await shot('inbox-voice')
  }, 30_000)

  test("a live call's page: Transfer puts the caller through to one of the agent's transfers", async () => {
    const BILLING = '+14155550966'
    expect((await s.api('PATCH', `/agents/${agent}`, { key: dev.key, body: { transfers: [{ name: 'Billing', phoneNumber: BILLING, whenToUse: 'bills and refunds' }] } })).status).toBe(200)
    await s.publish(dev.key, agent)
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550904' })).status).toBe(201)
    expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(BILLING)}`, { pickup: 'answer', ringMs: 0, lines: ['Billing here.'], hangupAfterMs: 60 * SEC })).status).toBe(200)
    await callee('+14155550904', [])
    const id = await place('+14155550904')
    await advance(SEC)
    await until(
      'connected',
      () => s.api('GET', `/calls/${id}`, { key: dev.key }),
      (r) => r.body.status === 'connected',
      10_000,
    )
    await page.goto(`${s.url}/console/app#/${dev.id}/call/${id}`)
    await page.waitForSelector('.transfer-box:not([hidden]) #transfer-to option', { timeout: 10_000 })
    expect(await page.$eval('label[for="transfer-to"]', (l) => l.textContent)).toBe('Transfer to')
    expect(await page.$$eval('#transfer-to option', (o) => o.map((x) => x.textContent))).toEqual([`Billing (${BILLING}, cold)`])
    await shot('call-transfer')
    await page.click('button.transfer')
    // The page follows the call: the transfer is on its facts, and the button goes.
    await page.waitForFunction(() => [...document.querySelectorAll('dd')].some((d) => d.textContent?.startsWith('Billing (+14155550966), by api')), { timeout: 10_000 })
    await page.waitForSelector('.transfer-box[hidden]')
    const call = (await s.api('GET', `/calls/${id}`, { key: dev.key })).body
    expect(call).toMatchObject({ status: 'connected', transfer: { to: 'Billing', by: 'api', mode: 'cold' } })
    expect(s.server.services.of(callsFeature).sandbox.transfers.get(call.callRef)).toMatchObject({ to: BILLING, answered: true, said: ['Billing here.'] })
    await shot('call-transferred')
    await advance(60 * SEC)
    await page.waitForFunction(() => [...document.querySelectorAll('dd')].some((d) => d.textContent?.includes('answered, 1:00')), { timeout: 10_000 })
  }, 60_000)

  test('campaigns: a calling campaign created, started, paused and cancelled from the app; its columns are about calls', async () => {
    await page.goto(`${s.url}/console/app#/${dev.id}/campaigns`)
    await page.waitForSelector('details.new-campaign summary')
    await page.click('details.new-campaign summary')
    await page.waitForSelector(`#c-agent option[value="${agent}"]`)
    await page.type('#c-name', 'Sunday hours')
    await page.select('#c-kind', 'voice')
    await page.type('#c-purpose', 'Hi, Bean There here: we now open on Sundays.')
    // A number that cannot be read is refused, naming it; what was typed stays.
    await page.type('#c-recipients', '+14155550901\nnot-a-number')
    await page.click('form.create-campaign button[type="submit"]')
    await page.waitForFunction(() => document.querySelector('form.create-campaign .error:not([hidden])')?.textContent?.includes('recipients[1]'))
    expect(await page.$eval('#c-name', (i) => (i as HTMLInputElement).value)).toBe('Sunday hours')
    await page.$eval('#c-recipients', (t) => ((t as HTMLTextAreaElement).value = '+14155550901\n+14155550902'))
    await page.click('form.create-campaign button[type="submit"]')
    await page.waitForFunction(() => location.hash.includes('/campaign/'))
    const id = decodeURIComponent(page.url().split('/campaign/')[1]!)
    await page.waitForSelector('button[data-move="start"]')
    expect(await page.$eval('#page h1', (e) => e.textContent)).toBe('Sunday hours')
    // Recipients in the order given, with call columns (a call is not read or replied to).
    await page.waitForSelector('table.recipients tbody tr[data-index="1"]')
    expect(await page.$$eval('table.recipients thead th', (t) => t.map((x) => x.textContent))).toEqual(['#', 'Number', 'Outcome', 'Why', 'Call', 'Length', 'Hang-up'])
    expect(await page.$$eval('.counts li', (l) => l.map((x) => x.firstChild!.textContent!.trim()))).toEqual(['Recipients', 'Called', 'Answered', 'Not answered yet', 'Failed', 'Skipped'])
    await page.click('button[data-move="start"]')
    await page.waitForSelector('button[data-move="pause"]')
    await page.click('button[data-move="pause"]')
    await page.waitForSelector('button[data-move="resume"]')
    expect((await s.console('GET', `/workspaces/${dev.id}/campaigns/${id}`)).body.status).toBe('paused')
    await shot('campaign')
    // Cancel asks first.
    page.once('dialog', (d) => void d.accept())
    await page.click('button[data-move="cancel"]')
    await page.waitForFunction(() => document.querySelector('.facts .badge.campaign')?.textContent === 'cancelled')
    expect(await page.$$('.campaign-actions button')).toHaveLength(0)
    // The list: calling campaigns in their own table, with call columns.
    await page.goto(`${s.url}/console/app#/${dev.id}/campaigns`)
    await page.waitForSelector(`section[data-kind="voice"] tr[data-campaign-id="${id}"] td[data-count="recipients"]`)
    expect(await page.$eval(`tr[data-campaign-id="${id}"] td[data-count="recipients"]`, (t) => t.textContent)).toBe('2')
    const headings = await page.$$eval('section[data-kind="voice"] thead th', (t) => t.map((x) => x.textContent))
    expect(headings).toEqual(expect.arrayContaining(['Called', 'Answered', 'Not answered yet']))
    expect(headings).not.toContain('Read')
    expect(headings).not.toContain('Replied')
    await shot('campaigns')
  }, 60_000)

  test('campaigns: a broadcast the empty wallet stopped says why, on the campaign and on each recipient', async () => {
    // Pay-as-you-go with four numbers rented against its 5 USD credit: nothing left to send with.
    const broke = await s.developer({ plan: 'payg', name: 'Broke Beans' })
    const brokeAgent = (await s.agent(broke.key, { name: 'Broke Beans' })).id
    for (let i = 0; i < 4; i++)
      expect(
        (await s.console('POST', `/workspaces/${broke.id}/phone-numbers`, { number: `+1415555092${i}`, source: 'rented', channel: i === 0 ? 'chatapp' : 'voice', agent: i === 0 ? brokeAgent : null }))
          .status,
      ).toBe(201)
    expect((await s.console('POST', `/workspaces/${broke.id}/templates`, { name: 'promo', language: 'en', category: 'marketing', body: 'New beans in' })).status).toBe(201)
    const to = ['+14155550931', '+14155550932', '+14155550933']
    for (const phone of to) expect((await s.console('POST', `/workspaces/${broke.id}/contacts`, { phone })).status).toBe(201)
    const made = await s.console('POST', `/workspaces/${broke.id}/campaigns`, { agent: brokeAgent, name: 'New beans', kind: 'chatapp', template: 'promo', recipients: to })
    expect(made.status).toBe(201)
    await page.goto(`${s.url}/console/app#/${broke.id}/campaign/${made.body.id}`)
    await page.waitForSelector('button[data-move="start"]')
    await page.click('button[data-move="start"]')
    await page.waitForFunction(() => document.querySelector('.facts .badge.campaign')?.textContent === 'failed', { timeout: 15_000 })
    const why = await page.$eval('.campaign-error', (p) => p.textContent)
    expect(why).toStartWith('Stopped: the balance cannot pay for a marketing message')
    await page.waitForFunction(() => document.querySelectorAll('table.recipients tbody tr[data-status="failed"]').length === 3)
    const rows = await page.$$eval('table.recipients tbody tr', (trs) => trs.map((tr) => tr.querySelector('td.why')?.textContent ?? ''))
    for (const row of rows) expect(row).toStartWith('not sent: the balance cannot pay for a marketing message')
    expect(await page.$$eval('table.recipients thead th', (t) => t.map((x) => x.textContent))).toEqual(['#', 'Number', 'Outcome', 'Why', 'Sent'])
    expect(await page.$eval('.counts strong[data-count="failed"]', (e) => e.textContent)).toBe('3')
    await shot('campaign-failed')
    // Only the failures, by the filter.
    await page.select('#r-status', 'failed')
    await page.waitForFunction(() => location.hash.endsWith('?status=failed'))
    await page.waitForSelector('table.recipients tbody tr[data-status="failed"]')
  }, 60_000)

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

/**
 * Runs in the page: the drawn chart's transitions as straight stretches (ELK routes them
 * orthogonally), which stretches of two different transitions lie on top of each other, how many
 * label boxes overlap, and which labels no stretch of their own transition passes through.
 */
function chartGeometry() {
  type Stretch = { edge: string; vertical: boolean; at: number; from: number; to: number }
  const stretches: Stretch[] = []
  for (const g of document.querySelectorAll<SVGGElement>('svg.chart g.transition')) {
    for (const path of g.querySelectorAll('path')) {
      const points = [...path.getAttribute('d')!.matchAll(/[ML]([-\d.]+),([-\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])] as const)
      for (let i = 1; i < points.length; i++) {
        const [x1, y1] = points[i - 1]!
        const [x2, y2] = points[i]!
        if (Math.abs(x1 - x2) < 0.5) stretches.push({ edge: g.dataset.edge!, vertical: true, at: x1, from: Math.min(y1, y2), to: Math.max(y1, y2) })
        else stretches.push({ edge: g.dataset.edge!, vertical: false, at: y1, from: Math.min(x1, x2), to: Math.max(x1, x2) })
      }
    }
  }
  const sharedStretches: string[] = []
  for (let i = 0; i < stretches.length; i++)
    for (let j = i + 1; j < stretches.length; j++) {
      const [a, b] = [stretches[i]!, stretches[j]!]
      if (a.edge === b.edge || a.vertical !== b.vertical || Math.abs(a.at - b.at) > 2) continue
      if (Math.min(a.to, b.to) - Math.max(a.from, b.from) > 2) sharedStretches.push(`${a.edge} and ${b.edge}`)
    }
  const boxes = [...document.querySelectorAll<SVGGElement>('svg.chart g.edge-label')].map((g) => {
    const r = g.querySelector('rect')!
    const [x, y, w, h] = ['x', 'y', 'width', 'height'].map((k) => Number(r.getAttribute(k)))
    return { edge: g.dataset.edge!, x: x!, y: y!, right: x! + w!, bottom: y! + h! }
  })
  let overlappingLabels = 0
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i]!, boxes[j]!]
      if (a.x < b.right - 1 && b.x < a.right - 1 && a.y < b.bottom - 1 && b.y < a.bottom - 1) overlappingLabels++
    }
  const through = (s: Stretch, b: (typeof boxes)[number]) =>
    s.vertical ? s.at >= b.x && s.at <= b.right && s.from <= b.bottom && s.to >= b.y : s.at >= b.y && s.at <= b.bottom && s.from <= b.right && s.to >= b.x
  const labelsOffTheirLine = boxes.filter((b) => !stretches.some((s) => s.edge === b.edge && through(s, b))).map((b) => b.edge)
  return { sharedStretches, overlappingLabels, labelsOffTheirLine }
}
