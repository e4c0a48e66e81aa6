/**
 * The console app's call quality in headless Chromium: a sandbox call's page shows its turn events
 * (the answer time of each turn as a chart with axes, interruptions taken, backchannels resumed,
 * pauses talked into), and the Quality page shows the workspace's last 24 hours and 7 days (answer
 * time p50/p95, interruptions and suspected cut-offs per call, transfers, calls refused at
 * capacity), each hour or day a link to the calls behind it. The service has room for one call
 * (CALLS_MAX_LIVE=1), so a second call placed or ringing in while the first is live is refused.
 * Screenshots go to test-artifacts/console-app/.
 */
import { expect, test } from 'bun:test'
import { callsFeature } from '../../src/features/calls'
import { describeWithChromium } from '../support/browser'
import { CONTACTS, SEC, useConsoleApp } from '../support/console-app'
import { until } from '../support/until'

describeWithChromium('the console app in Chromium: quality', () => {
  const app = useConsoleApp({ CALLS_MAX_LIVE: '1' })
  let call = ''

  test("a finished call's page: its turn events beside its latency", async () => {
    const { s, page, dev, shot, advance, callee, place, signIn } = app
    await signIn()
    await callee(CONTACTS[0]!, ['What time do you open on Sunday?', 'Thank you, bye.'])
    call = await place(CONTACTS[0]!)
    // The instance's one call is taken: a second placed (503) and one ringing in (busy) are refused.
    expect((await s.api('POST', '/calls', { key: dev.key, body: { to: CONTACTS[1]!, purpose: 'A second call' } })).status).toBe(503)
    expect((await s.console('POST', '/sandbox/calls', { from: '+14155550988', to: '+14155550900', hangupAfterMs: null })).body.answered).toBe(false)
    await advance(SEC) // the callee picks up
    await until(
      'the callee has spoken and been answered',
      async () => (await s.console('GET', `/workspaces/${dev.id}/calls/${call}`)).body,
      (c) => (c.latencyTurns?.length ?? 0) >= 2,
      60_000,
    )
    await advance(61 * SEC) // the callee hangs up
    await until(
      'completed',
      async () => (await s.console('GET', `/workspaces/${dev.id}/calls/${call}`)).body.status,
      (v) => v === 'completed',
      20_000,
    )
    const stored = (await s.console('GET', `/workspaces/${dev.id}/calls/${call}`)).body
    await page.goto(`${s.url}/console/app#/${dev.id}/call/${call}`)
    await page.waitForSelector('.turn-events svg.column-chart')
    // One column per turn, its height the answer time; the axes name turns and milliseconds.
    const chart = await page.$eval('.turn-events svg.column-chart', (svg) => ({
      columns: [...svg.querySelectorAll('rect.stage-1')].map((r) => r.querySelector('title')?.textContent),
      titles: [...svg.querySelectorAll('.axis-title')].map((t) => t.textContent),
      ticks: [...svg.querySelectorAll('text.tick')].map((t) => t.textContent),
    }))
    const turns = stored.latencyTurns as { toFirstHeardMs: number | null; toFirstAudioMs: number | null }[]
    expect(chart.columns).toEqual(turns.map((t, i) => `Turn ${i + 1}, answer heard: ${t.toFirstHeardMs ?? t.toFirstAudioMs} ms`))
    expect(chart.titles).toEqual(['ms after the caller stopped speaking', 'Turn'])
    expect(chart.ticks.slice(0, 2)).toEqual(['0', expect.stringMatching(/^\d+$/)])
    // The counts, as the call's latency has them.
    const counts = await page.$$eval('.turn-events dd', (d) => Object.fromEntries(d.map((x) => [(x as HTMLElement).dataset.event, x.textContent])))
    const o = stored.latency.overlaps
    expect(counts).toEqual({ taken: String(o.taken), resumed: String(o.resumed), talkedInto: String(o.talkedInto), talkedOver: String(o.talkedOver) })
    await page.$eval('.turn-events', (e) => e.scrollIntoView())
    await shot('call-turn-events')
  }, 150_000)

  test('the Quality page: the last 24 h and 7 d, each hour or day linking to its calls', async () => {
    const { s, page, dev, shot } = app
    // What a waiting call that stayed without room for ten minutes leaves: a refusal with its call record.
    s.server.services.of(callsFeature).refusals.refused(dev.id, 'outbound', call)
    await page.goto(`${s.url}/console/app#/${dev.id}/quality`)
    await page.waitForSelector('.quality-facts')
    const q = (await s.console('GET', `/workspaces/${dev.id}/quality?window=24h`)).body
    expect(q.overall.calls).toBe(1)
    expect(q.buckets.length).toBe(24)
    const facts = await page.$$eval('.quality-facts dd', (d) => Object.fromEntries(d.map((x) => [(x as HTMLElement).dataset.fact, x.textContent])))
    expect(facts.calls).toBe('1 call')
    expect(facts.refused).toBe('3: 2 placed, 1 rang in (busy)')
    expect(q.overall.refused).toEqual({ total: 3, outbound: 2, inbound: 1, web: 0, calls: [call] })
    expect(facts.answer).toBe(`p50 ${q.overall.answerMs.p50} ms · p95 ${q.overall.answerMs.p95} ms (${q.overall.turns} turns)`)
    // Two charts with axes and units; the hour with the call is a link to its calls.
    const charts = await page.$$eval('svg.column-chart', (all) => all.map((svg) => [...svg.querySelectorAll('.axis-title')].map((t) => t.textContent)))
    expect(charts).toEqual([
      ['ms after the caller stopped speaking', 'Hour'],
      ['per call', 'Hour'],
      ['calls refused', 'Hour'],
    ])
    // The refusals per hour: one column, its hour's row counting them and linking the call with a record.
    const refusedColumns = await page.$$eval('section[aria-labelledby="q-refused"] svg.column-chart rect.stage-3 title', (t) => t.map((x) => x.textContent))
    expect(refusedColumns.length).toBe(24)
    expect(refusedColumns.filter((t) => !t?.endsWith(': 0 calls'))).toEqual([expect.stringMatching(/, refused: 3 calls$/)])
    const refusedRows = await page.$$eval('.refused-table tbody tr', (r) => r.map((x) => [...x.children].map((c) => c.textContent)))
    expect(refusedRows).toEqual([[expect.any(String), '3', '2', '1', '0', call]])
    const links = await page.$$eval('svg.column-chart a.bucket', (a) => a.map((x) => x.getAttribute('href')))
    expect(links.length).toBe(2)
    await shot('quality-24h')
    await page.click('svg.column-chart a.bucket')
    await page.waitForFunction(() => location.hash.includes('/calls?'))
    await page.waitForSelector(`tr[data-call-id="${call}"]`)
    expect(await page.$$eval('tbody tr[data-call-id]', (r) => r.length)).toBe(1)
    expect(await page.$eval('p.range', (p) => p.textContent)).toStartWith('Created from ')
    await page.goBack()
    await page.waitForSelector('.refused-table a')
    await page.click('.refused-table a')
    await page.waitForFunction((id) => location.hash.endsWith(`/call/${id}`), {}, call)
    // The week: one column a day.
    await page.goto(`${s.url}/console/app#/${dev.id}/quality`)
    await page.waitForSelector('.quality-facts')
    await page.click('input[name="window"][value="7d"]')
    await page.waitForFunction(() => location.hash.endsWith('quality?window=7d'))
    await page.waitForFunction(() => [...document.querySelectorAll('svg.column-chart .axis-title')].some((t) => t.textContent === 'Day (UTC)'))
    expect(await page.$eval('input[name="window"][value="7d"]', (i) => (i as HTMLInputElement).checked)).toBe(true)
    await shot('quality-7d')
  }, 60_000)
})
