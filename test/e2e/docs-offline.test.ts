/**
 * The documentation pages work without internet access: every script and style they load is
 * served by us, no URL on them points at another host, and in Chromium with every request to
 * another host refused the viewer still renders the operations of the document.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'puppeteer-core'
import { describeWithChromium, launchChromium } from '../support/browser'
import { startTestServer, type TestServer } from '../support/server'

const PAGES = ['/api/v1/docs', '/docs', '/console/docs']

let s: TestServer
beforeAll(async () => {
  s = await startTestServer()
})
afterAll(async () => {
  await s?.stop()
})

/** The `src` of every script and the `href` of every link and anchor on the page. */
function references(html: string): { scripts: string[]; styles: string[]; links: string[] } {
  const attr = (tag: string, name: string) => [...html.matchAll(new RegExp(`<${tag}\\b[^>]*\\b${name}="([^"]*)"`, 'g'))].map((m) => m[1])
  const styles = [...html.matchAll(/<link\b[^>]*rel="stylesheet"[^>]*href="([^"]*)"/g)].map((m) => m[1])
  return { scripts: attr('script', 'src'), styles, links: attr('a', 'href') }
}

describe('documentation pages without internet access', () => {
  for (const page of PAGES) {
    test(`${page}: every script and style is ours, and the page names no other host`, async () => {
      const res = await fetch(`${s.url}${page}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toContain('text/html')
      // Our files only, in no other site's frame, never sniffed as another type.
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'")
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
      expect(res.headers.get('x-frame-options')).toBe('DENY')
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      const html = await res.text()
      // No absolute URL at all (nor protocol-relative //host): everything is on this origin.
      expect(html).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i)
      expect(html).not.toMatch(/\b(src|href)="\/\//)
      const { scripts, styles, links } = references(html)
      expect(scripts).toHaveLength(2)
      expect(styles).toHaveLength(1)
      for (const url of [...scripts, ...styles]) {
        const resolved = new URL(url, `${s.url}${page}`)
        expect(resolved.origin).toBe(new URL(s.url).origin)
        const asset = await fetch(resolved)
        expect(asset.status).toBe(200)
        expect(asset.headers.get('x-content-type-options')).toBe('nosniff')
        expect(asset.headers.get('content-type')).toMatch(scripts.includes(url) ? /javascript/ : /text\/css/)
        // Non-trivial: the viewer's bundle and styles are large; our start script is a few lines.
        expect((await asset.text()).length).toBeGreaterThan(100)
      }
      // The page links its JSON document, and that link answers the OpenAPI document.
      expect(links).toContain(`${page}/json`)
      const doc = await fetch(`${s.url}${page}/json`)
      expect(doc.status).toBe(200)
      expect(((await doc.json()) as { openapi: string }).openapi).toMatch(/^3\.1\./)
    })
  }

  test('the bundle is sent gzipped to a browser that takes it, and whole to one that does not', async () => {
    const path = `${s.url}/api/v1/docs/assets/swagger-ui-bundle.js`
    const gz = await fetch(path, { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit)
    expect(gz.headers.get('content-encoding')).toBe('gzip')
    const zipped = new Uint8Array(await gz.arrayBuffer())
    const plain = await fetch(path, { headers: { 'accept-encoding': 'identity' } })
    expect(plain.headers.get('content-encoding')).toBeNull()
    const whole = await plain.text()
    expect(whole.length).toBeGreaterThan(zipped.length * 2)
    expect(new TextDecoder().decode(Bun.gunzipSync(zipped))).toBe(whole)
  })
})

describeWithChromium('documentation pages in Chromium with other hosts unreachable', () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
  })

  for (const page of PAGES) {
    test(`${page} renders its operations`, async () => {
      const doc = (await (await fetch(`${s.url}${page}/json`)).json()) as { paths: Record<string, Record<string, unknown>> }
      const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).filter((k) => k !== 'parameters').length, 0)
      const tab = await browser.newPage()
      const elsewhere: string[] = []
      // The page's Content-Security-Policy lets the viewer do all it does.
      const refused: string[] = []
      tab.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) refused.push(message.text())
      })
      await tab.setRequestInterception(true)
      tab.on('request', (request) => {
        const url = new URL(request.url())
        if (url.protocol === 'data:' || url.origin === new URL(s.url).origin) return void request.continue()
        elsewhere.push(request.url())
        void request.abort()
      })
      try {
        await tab.goto(`${s.url}${page}`, { waitUntil: 'networkidle0' })
        await tab.waitForSelector('.opblock-summary-path', { timeout: 20_000 })
        const paths = await tab.$$eval('.opblock-summary-path', (all) => all.map((e) => e.getAttribute('data-path')))
        // Every operation of the document is on the page.
        expect(paths.length).toBe(operations)
        expect(new Set(paths)).toEqual(new Set(Object.keys(doc.paths)))
        expect(elsewhere).toEqual([])
        expect(refused).toEqual([])
      } finally {
        await tab.close()
      }
    }, 60_000)
  }
})
