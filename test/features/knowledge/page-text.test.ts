import { describe, expect, test } from 'bun:test'
import { needsScripting, pageText } from '../../../src/features/knowledge/page-text'

const page = (text: string, contentType: string | null = 'text/html; charset=utf-8', status = 200) =>
  pageText({ status, headers: new Headers(contentType ? { 'content-type': contentType } : {}), text })

const ARTICLE = `<!doctype html>
<html lang="en">
<head>
  <title>Delivery &amp; returns | Sunrise Bakery</title>
  <style>body { font-family: serif }</style>
  <script>window.dataLayer = [];</script>
</head>
<body>
  <nav><a href="/">Home</a> <a href="/menu">Menu</a> <a href="/contact">Contact</a></nav>
  <main>
    <h1>Delivery and returns</h1>
    <p>We deliver within 15 kilometres of the shop. Orders placed before 11 am arrive the same day.
       See <a href="https://example.com/zones">our delivery zones</a> for details.</p>
    <h2>Returns</h2>
    <p>Tell us within 48 hours if anything is wrong and we will refund you in full.</p>
    <ul><li>Refunds go back to your card</li><li>They take 3 to 5 working days</li></ul>
    <button>Order now</button>
  </main>
  <footer><p>Sunrise Bakery, 12 Market Street</p></footer>
  <script src="/analytics.js"></script>
</body>
</html>`

const SPA_SHELL = `<!doctype html>
<html><head><meta charset="utf-8"><title>Sunrise Bakery</title>
<link rel="stylesheet" href="/static/css/main.css">
<script defer src="/static/js/vendor.4f2a1.js"></script>
<script defer src="/static/js/main.9c1b2.js"></script>
</head>
<body><div id="root"></div></body></html>`

const NOSCRIPT_NOTICE = `<html><head><title>Help</title></head><body>
<noscript>You need to enable JavaScript to run this app.</noscript>
<div id="app-container" class="loading"></div>
<script>${'var chunk=1;'.repeat(50)}</script></body></html>`

describe('pageText', () => {
  test('an article becomes readable text with its title; chrome and scripts are dropped', () => {
    const result = page(ARTICLE)
    if (!result.ok) throw new Error(result.error)
    expect(result.title).toBe('Delivery & returns | Sunrise Bakery')
    expect(result.text).toContain('Delivery and returns') // heading kept, not upper-cased
    expect(result.text).toContain('We deliver within 15 kilometres')
    expect(result.text).toContain('our delivery zones for details') // link text without its URL
    expect(result.text).toMatch(/^Returns$/m) // headings on their own line for chunking
    expect(result.text).toContain('- Refunds go back to your card') // list items kept
    expect(result.text).toContain('12 Market Street')
    for (const gone of ['Menu', 'Order now', 'dataLayer', 'font-family', 'https://example.com']) {
      expect(result.text).not.toContain(gone)
    }
  })

  test('the first h1 is the title when there is no <title>', () => {
    const result = page('<body><h1>Gift cards</h1><p>Gift cards never expire and work online too.</p><h1>Other</h1></body>')
    expect(result).toEqual({ ok: true, title: 'Gift cards', text: expect.stringContaining('never expire') })
  })

  test('no title at all is null', () => {
    expect(page('<p>Plain paragraph only.</p>')).toMatchObject({ ok: true, title: null })
  })

  test('a script-only single-page app fails as needing JavaScript', () => {
    expect(page(SPA_SHELL)).toEqual({
      ok: false,
      error: expect.stringContaining('the page needs JavaScript to show its content'),
    })
  })

  test('a <noscript> asking for JavaScript fails the same way', () => {
    expect(page(NOSCRIPT_NOTICE)).toMatchObject({ ok: false, error: expect.stringContaining('needs JavaScript') })
  })

  test('a content page that also loads many scripts is fine', () => {
    const scripts = '<script src="/a.js"></script>'.repeat(10)
    const body = '<p>Our bakery opens at seven every morning and closes at seven in the evening.</p>'.repeat(5)
    expect(page(`<html><head>${scripts}</head><body>${body}</body></html>`).ok).toBe(true)
  })

  test('needsScripting looks at the markers, not just the size', () => {
    expect(needsScripting('<div id="__next"></div>')).toBe(true)
    expect(needsScripting('<app-root></app-root>')).toBe(true)
    expect(needsScripting('<p>hello</p>')).toBe(false)
  })

  test('a 403 bot wall fails naming the status', () => {
    const result = page('<html><body><h1>Access denied</h1><p>Checking your browser…</p></body></html>', 'text/html', 403)
    expect(result).toEqual({ ok: false, error: expect.stringContaining('HTTP 403') })
    if (!result.ok) expect(result.error).toContain('refused')
  })

  test('404 and 5xx fail naming the status', () => {
    expect(page('nope', 'text/html', 404)).toMatchObject({ ok: false, error: expect.stringContaining('HTTP 404 (not found)') })
    expect(page('oops', 'text/html', 503)).toMatchObject({ ok: false, error: expect.stringContaining('HTTP 503') })
  })

  test('plain text is accepted as it is', () => {
    expect(page('Opening hours: 7 to 7.\n\nClosed on holidays.', 'text/plain; charset=utf-8')).toEqual({
      ok: true,
      title: null,
      text: 'Opening hours: 7 to 7.\n\nClosed on holidays.',
    })
  })

  test('other content types are refused by name', () => {
    expect(page('%PDF-1.7', 'application/pdf')).toEqual({
      ok: false,
      error: 'the page is application/pdf; only HTML and plain-text pages can be added',
    })
    expect(page('{"a":1}', 'application/json')).toMatchObject({ ok: false, error: expect.stringContaining('application/json') })
    expect(page('GIF89a', 'image/gif').ok).toBe(false)
  })

  test('a missing content type is sniffed', () => {
    expect(page('<p>Sniffed as HTML, this is.</p>', null)).toMatchObject({ ok: true, text: 'Sniffed as HTML, this is.' })
    expect(page('just words', null)).toMatchObject({ ok: true, text: 'just words' })
  })

  test('empty pages fail', () => {
    expect(page('<html><body>   </body></html>').ok).toBe(false)
    expect(page('   ', 'text/plain').ok).toBe(false)
  })
})
