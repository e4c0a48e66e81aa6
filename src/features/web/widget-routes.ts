/**
 * The widget, served by us (no CDN): `GET /widget.js` (the loader a site embeds with
 * `data-key="wk_…"`), `GET /w/{webKey}` (the chat as a page: the loader's frame, and a shareable
 * link), and the chat's own small static files under `/web/`. Plain browser JavaScript and CSS
 * read once at boot: the job (a message list, a form, a call button) needs no framework.
 */

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Elysia } from 'elysia'

const ASSETS = join(import.meta.dir, 'assets')
const read = (name: string) => readFileSync(join(ASSETS, name), 'utf8')
/** Five minutes: a fixed widget reaches visitors quickly, and repeat page views skip the download. */
const CACHE = 'public, max-age=300'
/** Browsers take each file as the type it is sent with, never as one they guess from its bytes. */
const NOSNIFF = { 'x-content-type-options': 'nosniff' }
const JS = { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': CACHE, ...NOSNIFF }
const FILES: Record<string, { body: string; type: string }> = {
  'chat.js': { body: read('chat.js'), type: 'text/javascript; charset=utf-8' },
  'chat.css': { body: read('chat.css'), type: 'text/css; charset=utf-8' },
  'i18n.js': { body: read('i18n.js'), type: 'text/javascript; charset=utf-8' },
  'voice.js': { body: read('voice.js'), type: 'text/javascript; charset=utf-8' },
  'pcm-worklet.js': { body: read('pcm-worklet.js'), type: 'text/javascript; charset=utf-8' },
}
const WEB_KEY = /^wk_[A-Za-z0-9]{8,64}$/

const page = (webKey: string, embed: boolean) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Chat</title>
<link rel="stylesheet" href="/web/chat.css">
</head>
<body class="${embed ? 'embedded' : 'standalone'}">
<main id="chat" data-key="${webKey}" aria-label="Chat"></main>
<script src="/web/i18n.js" defer></script>
<script src="/web/voice.js" defer></script>
<script src="/web/chat.js" defer></script>
</body>
</html>
`

/** `exists`: whether a widget key names an agent; the chat page of one that does not is a 404. */
export function widgetRoutes(deps: { exists: (webKey: string) => Promise<boolean> }) {
  const loader = read('widget.js')
  return new Elysia({ detail: { hide: true } })
    .get('/widget.js', () => new Response(loader, { headers: { ...JS, 'access-control-allow-origin': '*' } }))
    .get('/web/:file', ({ params }) => {
      const file = FILES[params.file]
      if (!file) return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain', ...NOSNIFF } })
      return new Response(file.body, { headers: { 'content-type': file.type, 'cache-control': CACHE, ...NOSNIFF } })
    })
    .get('/w/:webKey', async ({ params, query }) => {
      if (!WEB_KEY.test(params.webKey) || !(await deps.exists(params.webKey))) return new Response('no such chat', { status: 404, headers: { 'content-type': 'text/plain', ...NOSNIFF } })
      return new Response(page(params.webKey, query.embed === '1'), {
        headers: {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-store',
          // Our own files only; the microphone for calls; any site may frame it (that is the widget).
          'content-security-policy': "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; media-src 'self' blob:; style-src 'self'; frame-ancestors *",
          'permissions-policy': 'microphone=(self)',
          ...NOSNIFF,
        },
      })
    })
}
