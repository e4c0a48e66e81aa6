/**
 * The console app's inbox in headless Chromium: a website conversation and a chat-app one taken
 * over and answered by a teammate (who each row names, what was said last, the chat app's 24-hour
 * window closing). Screenshots go to test-artifacts/console-app/.
 */
import { beforeAll, expect, test } from 'bun:test'
import { messagingFeature } from '../../src/features/messaging'
import { describeWithChromium } from '../support/browser'
import { SEC, useConsoleApp } from '../support/console-app'

describeWithChromium('the console app in Chromium: inbox', () => {
  const app = useConsoleApp()
  beforeAll(() => app.signIn())

  test('the inbox: a website conversation taken over and answered by a teammate', async () => {
    const { s, page, dev, shot } = app
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
    const { s, page, dev, agent, shot } = app
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

  test('the inbox list grows with the page (no fixed-height box hiding older rows), and older conversations come on request', async () => {
    const { s, page, dev, shot } = app
    // More than a page of 50: the oldest are behind "Older conversations".
    for (let i = 0; i < 52; i++) expect((await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'web', from: `visitor-${100 + i}`, text: `Question ${i}` })).status).toBe(201)
    await page.goto(`${s.url}/console/app#/${dev.id}/inbox?channel=web`)
    await page.waitForFunction(() => document.querySelectorAll('.conversations li[data-conversation-id]').length === 50)
    const box = await page.$eval('.conversations', (ul) => ({ overflow: getComputedStyle(ul).overflowY, hidden: ul.scrollHeight - ul.clientHeight }))
    expect(box).toEqual({ overflow: 'visible', hidden: 0 })
    await page.click('button.more-conversations')
    // Every web conversation of the workspace: the 52 and the one the first test took over.
    await page.waitForFunction(() => document.querySelectorAll('.conversations li[data-conversation-id]').length === 53)
    expect(await page.$eval('button.more-conversations', (b) => (b as HTMLButtonElement).hidden)).toBe(true)
    expect(await page.$eval('.conversations', (ul) => ul.scrollHeight - ul.clientHeight)).toBe(0)
    await shot('inbox-long')
  }, 60_000)
})
