/**
 * Turns a fetched page into the text an agent can cite, or into the reason it cannot.
 *
 * We read pages the way a simple crawler does: no JavaScript. A page whose content is drawn by
 * scripts (a single-page app shell, a "please enable JavaScript" notice) yields nothing useful,
 * and we say so instead of indexing an empty shell.
 */
import { compile } from 'html-to-text'

export type PageText = { ok: true; title: string | null; text: string } | { ok: false; error: string }

export interface FetchedPage {
  status: number
  headers: Headers
  text: string
}

/**
 * Below this many characters of visible text a page counts as "little text" (one short
 * paragraph). Real content pages have thousands; app shells and bot walls have a few dozen.
 */
export const MIN_VISIBLE_CHARS = 200
/** Scripts making up at least this share of the HTML bytes mean the page is built by code. */
const SCRIPT_DOMINANT_SHARE = 0.5

const toText = compile({
  wordwrap: false,
  selectors: [
    // Navigation, chrome and embedded media are not knowledge.
    { selector: 'nav', format: 'skip' },
    { selector: 'noscript', format: 'skip' },
    { selector: 'template', format: 'skip' },
    { selector: 'svg', format: 'skip' },
    { selector: 'iframe', format: 'skip' },
    { selector: 'button', format: 'skip' },
    { selector: 'select', format: 'skip' },
    { selector: 'img', format: 'skip' },
    { selector: '[aria-hidden=true]', format: 'skip' },
    // Link targets are noise in a passage; keep the link text only.
    { selector: 'a', options: { ignoreHref: true } },
    // Headings stay as written (the default upper-cases them) and on their own line, which is
    // how chunking recognises them.
    ...(['h1', 'h2', 'h3', 'h4', 'h5', 'h6'] as const).map((h) => ({
      selector: h,
      options: { uppercase: false, leadingLineBreaks: 2, trailingLineBreaks: 1 },
    })),
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    { selector: 'ul', options: { itemPrefix: ' - ' } },
  ],
})

const onlyTitle = compile({ wordwrap: false, baseElements: { selectors: ['title'], returnDomByDefault: false } })
const onlyH1 = compile({
  wordwrap: false,
  baseElements: { selectors: ['h1'], returnDomByDefault: false },
  limits: { maxBaseElements: 1 },
  selectors: [{ selector: 'h1', options: { uppercase: false } }],
})

/** Decides what a fetched URL contributes: readable text with a title, or a failure reason. */
export function pageText(page: FetchedPage): PageText {
  if (page.status >= 400) return { ok: false, error: statusError(page.status) }
  if (page.status < 200 || page.status >= 300) {
    return { ok: false, error: `the page answered HTTP ${page.status} instead of its content` }
  }
  const kind = contentKind(page.headers.get('content-type'), page.text)
  if (kind === 'plain') {
    const text = page.text.trim()
    return text ? { ok: true, title: null, text } : { ok: false, error: 'the page is empty' }
  }
  if (kind !== 'html') {
    return { ok: false, error: `the page is ${kind}; only HTML and plain-text pages can be added` }
  }
  return htmlPageText(page.text)
}

export function htmlPageText(html: string): PageText {
  const text = tidy(toText(html))
  const title = tidy(onlyTitle(html)) || tidy(onlyH1(html)) || null
  if (text.length < MIN_VISIBLE_CHARS && needsScripting(html)) {
    return { ok: false, error: 'the page needs JavaScript to show its content, so it cannot be read' }
  }
  if (!text) return { ok: false, error: 'the page has no readable text' }
  return { ok: true, title, text }
}

/**
 * Signals that a page is drawn by scripts. Plain scans, linear in the page: a lazy regex over
 * `<script>…</script>` rescans to the end from every unclosed tag, so a hostile page of repeated
 * `<script>` took seconds per 100 KB and held the whole server (one event loop) meanwhile.
 */
const MOUNT_SCAN_CHARS = 256 * 1024

export function needsScripting(html: string): boolean {
  const lower = html.toLowerCase()
  for (const inner of elements(lower, 'noscript')) if (/javascript|enable|browser/.test(inner)) return true
  // An empty mount point of the common frameworks (React, Vue, Next, Nuxt, Angular, Svelte). An
  // app shell is small and its mount point short: bounded attribute runs over the first 256 KB
  // keep a page of thousands of unclosed tags from costing seconds.
  const head = lower.slice(0, MOUNT_SCAN_CHARS)
  if (/<(div|main)\b[^>]{0,300}\bid=["'](root|app|__next|__nuxt|svelte|main-app)["'][^>]{0,300}>\s*<\/\1>/.test(head)) return true
  if (/<app-root\b[^>]{0,300}>\s*<\/app-root>/.test(head)) return true
  let scriptChars = 0
  let scriptTags = 0
  for (const inner of elements(lower, 'script')) {
    scriptChars += inner.length
    scriptTags++
  }
  return scriptChars >= html.length * SCRIPT_DOMINANT_SHARE || scriptTags >= 3
}

/** The contents of each `<tag …>…</tag>` in order (an unclosed last one runs to the end), found with indexOf. */
function* elements(lower: string, tag: string): Generator<string> {
  const open = `<${tag}`
  const close = `</${tag}`
  let at = 0
  for (;;) {
    const start = lower.indexOf(open, at)
    if (start < 0) return
    const next = lower.charAt(start + open.length)
    // `<scripts>` or `<noscripted>` are other tags.
    if (next !== '>' && next !== ' ' && next !== '\t' && next !== '\n' && next !== '/' && next !== '\r') {
      at = start + open.length
      continue
    }
    const bodyStart = lower.indexOf('>', start)
    if (bodyStart < 0) return
    const end = lower.indexOf(close, bodyStart)
    yield lower.slice(bodyStart + 1, end < 0 ? lower.length : end)
    if (end < 0) return
    at = end + close.length
  }
}

function statusError(status: number): string {
  const refusal: Record<number, string> = {
    401: 'it asks for a login',
    403: 'it refused access, often a wall against automated readers',
    404: 'not found',
    410: 'gone',
    429: 'too many requests; it is rate-limiting readers',
  }
  const why = refusal[status] ?? (status >= 500 ? 'a server error on that site' : 'refused')
  return `the page answered HTTP ${status} (${why})`
}

type Kind = 'html' | 'plain' | string

function contentKind(contentType: string | null, body: string): Kind {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html'
  if (type === 'text/plain') return 'plain'
  // No type given: sniff the start the way browsers do for untyped documents.
  if (!type) return /^\s*</.test(body) ? 'html' : 'plain'
  return type
}

/** Trims trailing spaces, collapses runs of blank lines. */
function tidy(text: string): string {
  return text
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}
