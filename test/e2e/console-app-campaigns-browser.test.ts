/**
 * The console app's campaigns in headless Chromium: a calling campaign created (a bad number
 * refused, naming it), started, paused and cancelled, with columns about calls; a broadcast the
 * empty wallet stopped saying why on the campaign and each recipient. Screenshots go to
 * test-artifacts/console-app/.
 */
import { beforeAll, expect, test } from 'bun:test'
import { describeWithChromium } from '../support/browser'
import { SEC, useConsoleApp } from '../support/console-app'
import { until } from '../support/until'

describeWithChromium('the console app in Chromium: campaigns', () => {
  const app = useConsoleApp()
  beforeAll(() => app.signIn())

  test('campaigns: a calling campaign created, started, paused and cancelled from the app; its columns are about calls', async () => {
    const { s, page, dev, agent, shot } = app
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
    expect(headings).toEqual(expect.arrayContaining(['Called', 'Answered', 'Not answered']))
    expect(headings).not.toContain('Read')
    expect(headings).not.toContain('Replied')
    await shot('campaigns')
  }, 60_000)

  test('a finished calling campaign: the callee who never answered reads not reached, not sent or "not answered yet"', async () => {
    const { s, page, dev, agent, shot, advance } = app
    const [answers, never] = ['+14155550941', '+14155550942']
    for (const phone of [answers, never]) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
    expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(answers)}`, { pickup: 'answer', ringMs: 0, hangupAfterMs: 5 * SEC })).status).toBe(200)
    expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(never)}`, { pickup: 'no_answer', ringMs: 0 })).status).toBe(200)
    const made = await s.console('POST', `/workspaces/${dev.id}/campaigns`, { agent, name: 'Reach two', kind: 'voice', purpose: 'Hi from Bean There.', recipients: [answers, never] })
    expect(made.status).toBe(201)
    const id = made.body.id
    expect((await s.console('POST', `/workspaces/${dev.id}/campaigns/${id}/start`)).status).toBe(200)
    await until(
      'the campaign to finish',
      async () => {
        await advance(6 * SEC)
        return (await s.console('GET', `/workspaces/${dev.id}/campaigns/${id}`)).body
      },
      (c) => c.status === 'sent',
      20_000,
    )
    await page.goto(`${s.url}/console/app#/${dev.id}/campaign/${id}`)
    await page.waitForSelector('table.recipients tbody tr[data-index="1"] .badge')
    const outcome = (i: number) => page.$eval(`table.recipients tbody tr[data-index="${i}"] .badge`, (b) => b.textContent)
    expect(await outcome(0)).toBe('delivered')
    expect(await outcome(1)).toBe('not reached')
    expect(await page.$$eval('.counts li', (l) => l.map((x) => x.firstChild!.textContent!.trim()))).toEqual(['Recipients', 'Called', 'Answered', 'Not reached', 'Failed', 'Skipped'])
    expect(await page.$eval('.counts strong[data-count="unanswered"]', (e) => e.textContent)).toBe('1')
    await shot('campaign-finished')
  }, 60_000)

  test('campaigns: a broadcast the empty wallet stopped says why, on the campaign and on each recipient', async () => {
    const { s, page, shot } = app
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
})
