/**
 * What a website visitor meets when there is no chat to have: the chat page of a key that names
 * no agent is a 404, and an agent that is not published (or has its widget switched off) is
 * "not available right now" for the visitor, over the API and on the page, while the reason
 * (the agent, how to publish) goes to the server log.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'puppeteer-core'
import { UNAVAILABLE } from '../../src/features/web/service'
import { describeWithChromium, launchChromium } from '../support/browser'
import { capturedLogger } from '../support/log-capture'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let key: string
let workspace: string
let draft: { id: string; webKey: string }
const { logger, lines } = capturedLogger('warn')

beforeAll(async () => {
  s = await startTestServer({}, undefined, logger)
  ;({ id: workspace, key } = await s.developer())
  const r = await s.api('POST', '/agents', { key, body: { name: 'Never published' } })
  expect(r.status).toBe(201)
  draft = r.body
})
afterAll(async () => {
  await s?.stop()
})

describe('the chat page and the visitor API', () => {
  test('GET /w/{key} is 404 for a well-formed key that names no agent, 200 for one that does', async () => {
    const unknown = await fetch(`${s.url}/w/wk_nosuchkey0000000000`)
    expect(unknown.status).toBe(404)
    expect(await unknown.text()).toBe('no such chat')
    expect((await fetch(`${s.url}/w/wk_nosuchkey0000000000?embed=1`)).status).toBe(404)
    const known = await fetch(`${s.url}/w/${draft.webKey}`)
    expect(known.status).toBe(200)
    expect(await known.text()).toContain(`data-key="${draft.webKey}"`)
  })

  test('the page, the loader and the chat files are never sniffed as another type', async () => {
    for (const path of [`/w/${draft.webKey}`, '/w/wk_nosuchkey0000000000', '/widget.js', '/web/chat.js', '/web/chat.css', '/web/voice.js', '/web/i18n.js', '/web/pcm-worklet.js', '/web/nothing.js']) {
      const r = await fetch(`${s.url}${path}`)
      expect({ path, nosniff: r.headers.get('x-content-type-options') }).toEqual({ path, nosniff: 'nosniff' })
    }
  })

  test('an unpublished agent: the visitor is told the chat is not available; the log says why', async () => {
    const before = lines.length
    for (const [method, path, body] of [
      ['GET', '', undefined],
      ['POST', '/sessions', {}],
    ] as const) {
      const r = await fetch(`${s.url}/api/v1/web/${draft.webKey}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) })
      expect(r.status).toBe(409)
      const answer = (await r.json()) as { error: string; state: string }
      expect(answer).toEqual({ error: UNAVAILABLE, state: 'draft' })
    }
    const logged = lines.slice(before).filter((l) => l.msg === 'website chat refused a visitor')
    expect(logged.length).toBe(2)
    expect(logged[0]).toMatchObject({ level: 40, webKey: draft.webKey })
    expect(logged[0].reason).toContain(`agent ${draft.id} is not published`)
  })

  test('a published agent with its widget switched off: the same for the visitor, the switch in the log', async () => {
    const agent = await s.agent(key, { name: 'Switched off', widget: { enabled: false } })
    const before = lines.length
    const r = await fetch(`${s.url}/api/v1/web/${agent.webKey}`)
    expect(r.status).toBe(409)
    expect(await r.json()).toEqual({ error: UNAVAILABLE, state: 'disabled' })
    expect(lines.slice(before).find((l) => l.msg === 'website chat refused a visitor')?.reason).toContain('widget.enabled is false')
  })

  test('the console, for the workspace’s operator, still gets the reason in full', async () => {
    const r = await s.console('POST', `/workspaces/${workspace}/inbound`, { channel: 'web', from: 'visitor-1', to: draft.id, text: 'hello?' })
    expect(r.status).toBe(409)
    expect(r.body.error).toContain(`agent ${draft.id} is not published`)
  })
})

describeWithChromium('the chat page in Chromium', () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
  })

  test('an unpublished agent’s page shows the visitor only that the chat is not available', async () => {
    const page = await browser.newPage()
    try {
      await page.goto(`${s.url}/w/${draft.webKey}`)
      await page.waitForSelector('.alert:not([hidden])', { timeout: 20_000 })
      expect(await page.$eval('.alert', (a) => a.textContent)).toBe('This chat is not available right now.')
      // biome-ignore lint/performance/useDomNodeTextContent: only rendered text counts; textContent includes hidden nodes
      const shown = await page.evaluate(() => document.body.innerText)
      expect(shown).not.toContain(draft.id)
      expect(shown).not.toMatch(/publish/i)
    } finally {
      await page.close()
    }
  }, 60_000)
})
