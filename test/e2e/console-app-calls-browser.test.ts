/**
 * The console app's calls in headless Chromium (Debian's package, through puppeteer-core): sign in
 * with the console token, pick the workspace, watch a sandbox call go from ringing to completed on
 * the Live page with its transcript growing, open its page (recording with waveform, latency chart,
 * summary, events), read that call's voice conversation in the inbox, transfer a live call from its
 * page, and reach the pages with the keyboard. Screenshots of each page go to
 * test-artifacts/console-app/. The app's other pages: console-app-{charts,inbox,campaigns}-browser.test.ts.
 */
import { expect, test } from 'bun:test'
import { callsFeature } from '../../src/features/calls'
import { describeWithChromium } from '../support/browser'
import { SEC, useConsoleApp } from '../support/console-app'
import { until } from '../support/until'

describeWithChromium('the console app in Chromium: calls', () => {
  const app = useConsoleApp()
  /** The call the first test watches end: its voice conversation is read in the inbox later. */
  let endedCall = ''
  const linesOf = (id: string) => app.page.$$eval(`.card[data-call-id="${id}"] .transcript li`, (l) => l.length)

  test('sign in, then a sandbox call goes from ringing to completed on the Live page, its transcript growing', async () => {
    const { s, page, dev, shot, advance, callee, place, statusOf } = app
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
    // Which settings the call ran with: its version and that version's voice dials.
    const facts = await page.$$eval('.facts dt, .facts dd', (d) => d.map((x) => x.textContent))
    expect(facts[facts.indexOf('Voice dials') + 1]).toBe('speed engine default · patience normal · interruptions on')
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

  test('the inbox: the voice conversation of an ended call is resolved and offers no take over', async () => {
    const { s, page, dev, shot } = app
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
    const { s, page, dev, agent, shot, advance, callee, place } = app
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
    // The network takes the caller once the agent's sentence has played (docs/api/calls.md "Transfer").
    const taken = await until(
      'the sandbox network to take the transfer',
      () => s.server.services.of(callsFeature).sandbox.transfers.get(call.callRef),
      (t) => t?.said?.length === 1,
      10_000,
    )
    expect(taken).toMatchObject({ to: BILLING, answered: true, said: ['Billing here.'] })
    await shot('call-transferred')
    await advance(60 * SEC)
    await page.waitForFunction(() => [...document.querySelectorAll('dd')].some((d) => d.textContent?.includes('answered, 1:00')), { timeout: 10_000 })
  }, 60_000)

  test("a connected call's Length counts on the service's clock, on its page and in the Calls list", async () => {
    const { s, page, dev, advance, callee, place } = app
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550905' })).status).toBe(201)
    await callee('+14155550905', [])
    const id = await place('+14155550905')
    await advance(SEC)
    await until(
      'connected',
      () => s.api('GET', `/calls/${id}`, { key: dev.key }),
      (r) => r.body.status === 'connected',
      10_000,
    )
    await advance(20 * SEC)
    expect((await s.api('GET', `/calls/${id}`, { key: dev.key })).body.status).toBe('connected')
    // A page opened afresh: its stream's first word gives the service's time.
    await page.goto('about:blank')
    await page.goto(`${s.url}/console/app`)
    await page.evaluate((token) => sessionStorage.setItem('console-token', token), s.consoleToken)
    await page.goto(`${s.url}/console/app#/${dev.id}/call/${id}`)
    const seconds = (sel: string) =>
      page.waitForFunction(
        (q) => {
          const m = /^(\d+):(\d\d)$/.exec(document.querySelector(q)?.textContent ?? '')
          return m ? Number(m[1]) * 60 + Number(m[2]) : 0
        },
        { timeout: 10_000 },
        sel,
      )
    // Counted from the answer 20 s ago (0:00 would never do: the wait needs a count above zero).
    expect(Number(await (await seconds('.facts .length')).jsonValue())).toBeGreaterThanOrEqual(20)
    await page.goto(`${s.url}/console/app#/${dev.id}/calls`)
    await page.waitForSelector(`tr[data-call-id="${id}"] td.length`)
    expect(Number(await (await seconds(`tr[data-call-id="${id}"] td.length`)).jsonValue())).toBeGreaterThanOrEqual(20)
    expect((await s.console('DELETE', `/workspaces/${dev.id}/calls/${id}`)).status).toBeLessThan(300)
  }, 30_000)

  test('keyboard: the skip link and the pages are reachable with Tab, and every form control has a label', async () => {
    const { s, page, dev } = app
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
