/**
 * The console app's state charts in headless Chromium: the call machine drawn (no two transitions
 * along one stretch of line, no two labels overlapping) with a live call's state marked as it
 * moves, the call ended from the Live page, and the actor to follow picked from a list, for calls
 * and campaigns. Screenshots go to test-artifacts/console-app/.
 */
import { beforeAll, expect, test } from 'bun:test'
import { describeWithChromium } from '../support/browser'
import { SEC, useConsoleApp } from '../support/console-app'
import { until } from '../support/until'

describeWithChromium('the console app in Chromium: state charts', () => {
  const app = useConsoleApp()
  beforeAll(() => app.signIn())

  test('the call machine is drawn with a live call’s state marked as it moves; the call is ended from the Live page', async () => {
    const { s, page, dev, shot, advance, callee, place, statusOf } = app
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
    const { s, page, dev, agent, callee, place } = app
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

  test('the drawing opens fitted to its box, and zooms and pans with the buttons, the keys and the mouse', async () => {
    const { s, page, dev, shot } = app
    // A fresh page: the chart the last test drew is gone (a hash change alone would keep it until the new one is laid out).
    await page.goto('about:blank')
    await page.goto(`${s.url}/console/app#/${dev.id}/charts?machine=call`)
    await page.waitForSelector('svg.chart g.state[data-state="call.created"]', { timeout: 20_000 })
    // Every state sits inside the box, whose size is the page's, not the drawing's.
    expect(await page.evaluate(outsideTheBox)).toEqual([])
    const box = await page.$eval('.chart-box', (b) => [b.clientWidth, b.clientHeight])
    expect(box[0]).toBeLessThanOrEqual(1280)
    expect(box[1]).toBeLessThanOrEqual(900)
    await shot('chart-fitted')

    const zoom = () => page.$eval('.chart-box', (b) => Number((b as HTMLElement).dataset.zoom))
    await page.click('.zoom-controls button[aria-label="Zoom in"]')
    await page.click('.zoom-controls button[aria-label="Zoom in"]')
    expect(await zoom()).toBeCloseTo(1.5625, 3)
    expect((await page.evaluate(outsideTheBox)).length).toBeGreaterThan(0)
    const viewBox = () => page.$eval('svg.chart', (svg) => svg.getAttribute('viewBox')!.split(' ').map(Number))
    const before = await viewBox()
    await page.focus('.chart-box')
    await page.keyboard.press('ArrowRight')
    const after = await viewBox()
    expect(after[0]).toBeGreaterThan(before[0]!)
    expect(after[1]).toBe(before[1]!)
    // A drag moves the drawing with the pointer: dragged right, the view looks further left.
    const r = await page.$eval('.chart-box', (b) => b.getBoundingClientRect().toJSON())
    await page.mouse.move(r.x + r.width / 2, r.y + r.height / 2)
    await page.mouse.down()
    await page.mouse.move(r.x + r.width / 2 + 100, r.y + r.height / 2, { steps: 4 })
    await page.mouse.up()
    expect((await viewBox())[0]).toBeLessThan(after[0]!)
    // The wheel zooms out, then 0 fits the whole drawing again.
    await page.mouse.wheel({ deltaY: 100 })
    expect(await zoom()).toBeCloseTo(1.25, 3)
    await page.keyboard.press('0')
    expect(await zoom()).toBe(1)
    expect(await page.evaluate(outsideTheBox)).toEqual([])
  }, 30_000)
})

/** Runs in the page: the states whose drawn box is not wholly inside the chart's box. */
function outsideTheBox() {
  const box = document.querySelector('.chart-box')!.getBoundingClientRect()
  return [...document.querySelectorAll<SVGGElement>('svg.chart g.state > rect')]
    .filter((r) => {
      const b = r.getBoundingClientRect()
      return b.left < box.left - 0.5 || b.top < box.top - 0.5 || b.right > box.right + 0.5 || b.bottom > box.bottom + 0.5
    })
    .map((r) => r.parentElement!.getAttribute('data-state'))
}

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
