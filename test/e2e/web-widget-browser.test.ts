/**
 * The widget in a real browser: headless Chromium loads a shop page served from
 * another origin that embeds `/widget.js`; the launcher opens the chat frame, the welcome form
 * captures a lead, and a question is answered from the agent's knowledge, streamed into the page.
 * Screenshots at 1280 px and 360 px are kept in test-artifacts/web-widget/.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Browser, Frame, HTTPRequest, Page } from 'puppeteer-core'
import type { RecordedEvent } from '../../src/events/bus'
import { artifactDir, describeWithChromium, launchChromium } from '../support/browser'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.`

describeWithChromium('the widget in Chromium', () => {
  let s: TestServer
  let shop: ReturnType<typeof Bun.serve>
  let browser: Browser
  let agent: { id: string; webKey: string }
  let devKey: string
  let devId: string
  const events: RecordedEvent[] = []
  const shots = artifactDir('web-widget')

  beforeAll(async () => {
    s = await startTestServer()
    const dev = await s.developer({ plan: 'scale' })
    devKey = dev.key
    devId = dev.id
    const r = await s.api('POST', '/agents', {
      key: dev.key,
      body: { name: 'Bean There', greeting: 'Hi! Ask me about our coffee shop.', widget: { welcomeCollectLeads: true, accent: '#0b6e4f', theme: 'modern' } },
    })
    agent = { id: r.body.id, webKey: r.body.webKey }
    expect((await s.api('POST', `/agents/${agent.id}/knowledge`, { key: dev.key, body: { text: FAQ, title: 'Shop FAQ' } })).status).toBe(201)
    const pub = await fetch(`${s.url}/agents/${agent.id}/publish`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: '{}' })
    expect(pub.status).toBe(200)
    s.server.services.bus.subscribe((e) => void events.push(e))
    // The customer's site: another origin (another port) embedding the loader as the docs say.
    const html = `<!doctype html><html><head><title>Bean There coffee</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family:serif;background:#faf3e8"><h1>Bean There coffee</h1><p>Fresh roasts daily.</p>
<script src="${s.url}/widget.js" data-key="${agent.webKey}" async></script></body></html>`
    shop = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(html, { headers: { 'content-type': 'text/html' } }) })
    browser = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    shop?.stop(true)
    await s?.stop()
  })

  const chatFrame = async (page: Page): Promise<Frame> => {
    await until(
      'the chat frame',
      async () => page.frames().find((f) => f.url().includes(`/w/${agent.webKey}`)) ?? null,
      (f) => f !== null,
      20_000,
    )
    const frame = page.frames().find((f) => f.url().includes(`/w/${agent.webKey}`))!
    await frame.waitForSelector('#chat .bar h1')
    return frame
  }

  test('embedded on another origin: welcome form captures a lead, a question is answered from knowledge', async () => {
    const page = await browser.newPage()
    await page.setViewport({ width: 1280, height: 800 })
    await page.goto(`http://127.0.0.1:${shop.port}/`)
    const launcher = await page.waitForSelector('pierce/button.launcher', { timeout: 20_000 })
    expect(await launcher!.evaluate((b) => b.getAttribute('aria-label'))).toBe('Open chat with Bean There')
    await launcher!.click()
    expect(await launcher!.evaluate((b) => b.getAttribute('aria-expanded'))).toBe('true')
    const frame = await chatFrame(page)
    expect(await frame.$eval('.bar h1', (h) => h.textContent)).toBe('Bean There')
    // The welcome form: labelled fields, at least one detail.
    await frame.waitForSelector('.welcome:not([hidden]) #lead-email')
    expect(await frame.$eval('label[for="lead-email"]', (l) => l.textContent)).toBe('Email')
    await frame.type('#lead-name', 'Ana Lima')
    await frame.type('#lead-email', 'ana@example.com')
    await frame.click('.lead button.start')
    await until(
      'lead.captured',
      async () => events.filter((e) => e.type === 'lead.captured'),
      (l) => l.some((e) => (e.data as any).email === 'ana@example.com'),
      10_000,
    )
    const lead = events.find((e) => e.type === 'lead.captured')!.data as any
    expect(lead).toMatchObject({ name: 'Ana Lima', email: 'ana@example.com', channel: 'web', test: false })
    // The greeting, then a question typed and sent with Enter.
    await frame.waitForSelector('.composer:not([hidden]) #message')
    expect(await frame.$eval('.log .msg.agent .text', (m) => m.textContent)).toBe('Hi! Ask me about our coffee shop.')
    await frame.type('#message', 'What are your opening hours on Sunday?')
    await page.keyboard.press('Enter')
    await frame.waitForFunction(() => [...document.querySelectorAll('.log .msg.agent .text')].some((m) => m.textContent!.includes('8 am to 2 pm')), { timeout: 20_000 })
    expect(await frame.$$eval('.log .msg.customer .text', (m) => m.map((x) => x.textContent))).toEqual(['What are your opening hours on Sunday?'])
    // The conversation is the lead's: same visitor, same conversation, in the inbox on channel web.
    const list = await s.api('GET', '/conversations?channel=web', { key: devKey })
    const conversation = list.body.items.find((c: any) => c.id === lead.conversationId)
    expect(conversation).toMatchObject({ channel: 'web' })
    const stored = await s.api('GET', `/conversations/${lead.conversationId}/messages`, { key: devKey })
    expect(stored.body.items.map((m: any) => m.author)).toEqual(['agent', 'customer'])
    const msgs = await frame.$$eval('.log .msg', (m) => m.length)
    expect(msgs).toBe(3)
    // A person from the team writes from the console: the open chat shows it at once.
    const wrote = await s.console('POST', `/workspaces/${devId}/conversations/${lead.conversationId}/messages`, { text: 'Hi Ana, Maya here from the shop.' })
    expect(wrote.status).toBe(201)
    await frame.waitForFunction(() => [...document.querySelectorAll('.log .msg.teammate .text')].some((m) => m.textContent === 'Hi Ana, Maya here from the shop.'), { timeout: 20_000 })
    await page.screenshot({ path: join(shots, 'widget-1280.png') })

    // A phone: 360 px wide, the panel fills the screen and stays usable.
    // (isMobile would reload the page and close the panel; the width is what the layout reads.)
    await page.setViewport({ width: 360, height: 740 })
    const box = await page.$eval('pierce/.panel', (p) => {
      const r = p.getBoundingClientRect()
      return { w: r.width, h: r.height }
    })
    expect(box.w).toBe(360)
    const composer = await frame.$eval('.composer', (c) => c.getBoundingClientRect().width)
    expect(composer).toBeLessThanOrEqual(360)
    await page.screenshot({ path: join(shots, 'widget-360.png') })
    await page.close()
  }, 60_000)

  test('the standalone page /w/{webKey}: keyboard only, resumes the conversation on reload', async () => {
    // A new visitor: its own storage, not the first test's session.
    const context = await browser.createBrowserContext()
    const page = await context.newPage()
    await page.setViewport({ width: 1280, height: 800 })
    await page.goto(`${s.url}/w/${agent.webKey}`)
    await page.waitForSelector('.welcome:not([hidden]) #lead-name')
    expect(await page.evaluate(() => document.documentElement.lang)).toBeTruthy()
    await page.focus('#lead-phone')
    await page.keyboard.type('+1 415 555 0100')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    await page.waitForSelector('.composer:not([hidden]) #message')
    await page.keyboard.type('What are your opening hours on Sunday?')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent .text')].some((m) => m.textContent!.includes('8 am to 2 pm')), { timeout: 20_000 })
    await page.reload()
    await page.waitForFunction(() => document.querySelectorAll('.msg').length >= 2, { timeout: 20_000 })
    await page.waitForSelector('.composer:not([hidden]) #message')
    expect(await page.$$eval('.msg.customer .text', (m) => m.map((x) => x.textContent))).toEqual(['What are your opening hours on Sunday?'])
    await page.setViewport({ width: 360, height: 740 })
    await page.screenshot({ path: join(shots, 'page-360.png') })
    await context.close()
  }, 60_000)

  test('classic theme, no welcome screen, a light accent, Spanish: greeting and composer at once, dark text on the accent, the chat in Spanish', async () => {
    const r = await s.api('POST', '/agents', {
      key: devKey,
      body: { name: 'Sunny Tours', greeting: 'Where would you like to go?', language: 'Spanish', widget: { theme: 'classic', accent: '#ffd400', welcomeScreen: false, welcomeCollectLeads: false } },
    })
    const pub = await fetch(`${s.url}/agents/${r.body.id}/publish`, { method: 'POST', headers: { authorization: `Bearer ${devKey}`, 'content-type': 'application/json' }, body: '{}' })
    expect(pub.status).toBe(200)
    const context = await browser.createBrowserContext()
    const page = await context.newPage()
    await page.setViewport({ width: 360, height: 740 })
    // The visitor's session is held back, as a slow network or a busy service holds it: the chat
    // offers no composer before it can send, so a wait for the composer waits for the chat.
    let held: HTTPRequest | null = null
    await page.setRequestInterception(true)
    page.on('request', (req) => {
      if (req.method() === 'POST' && req.url().endsWith('/sessions')) held = req
      else void req.continue()
    })
    await page.goto(`${s.url}/w/${r.body.webKey}`)
    const session = await until(
      'the session asked for',
      async () => held,
      (h) => h !== null,
    )
    expect(await page.$eval('.composer', (c) => c.hasAttribute('hidden'))).toBe(true)
    await session!.continue()
    await page.waitForSelector('.composer:not([hidden]) #message')
    expect(await page.$eval('.msg.agent .text', (m) => m.textContent)).toBe('Where would you like to go?')
    expect(await page.evaluate(() => ({ lang: document.documentElement.lang, classic: document.body.classList.contains('theme-classic') }))).toEqual({ lang: 'es', classic: true })
    expect(await page.$eval('.send', (b) => getComputedStyle(b).color)).toBe('rgb(17, 17, 17)')
    // The chat's own words in the agent's language.
    expect(await page.$eval('.send', (b) => b.textContent)).toBe('Enviar')
    expect(await page.$eval('#message', (m) => m.getAttribute('placeholder'))).toBe('Escribe tu mensaje…')
    expect(await page.$eval('label[for="message"]', (l) => l.textContent)).toBe('Tu mensaje')
    await page.screenshot({ path: join(shots, 'classic-360.png') })
    await context.close()
  }, 60_000)
})
