/**
 * The documentation pages' viewer: Swagger UI from the `swagger-ui-dist` package, served through
 * our own routes, so the pages work on a machine without internet access (a self-hosted product)
 * and no request leaves it. Swagger UI's validator badge, which asks validator.swagger.io, is off.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'

/** An hour: the files change only with the package, and a developer reloads the page often. */
const CACHE = 'public, max-age=3600'

/** Starts Swagger UI on the page's `#docs` element, with the document its `data-url` names. */
const START = `var root = document.getElementById('docs')
window.ui = SwaggerUIBundle({
  url: root.dataset.url,
  domNode: root,
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
})
`

interface Asset {
  type: string
  body: Uint8Array<ArrayBuffer>
  gzipped: Uint8Array<ArrayBuffer>
}

const SOURCES: Record<string, { type: string; read: (dir: string) => Buffer }> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', read: (dir) => readFileSync(join(dir, 'swagger-ui.css')) },
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', read: (dir) => readFileSync(join(dir, 'swagger-ui-bundle.js')) },
  'start.js': { type: 'text/javascript; charset=utf-8', read: () => Buffer.from(START) },
}

export const VIEWER_FILES = Object.keys(SOURCES)

// Read and compressed on first use, once per process: the bundle is 1.7 MB (about 0.5 MB gzipped).
let assets: Map<string, Asset> | null = null
function load(): Map<string, Asset> {
  if (assets) return assets
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
  assets = new Map(
    Object.entries(SOURCES).map(([name, { type, read }]) => {
      const body = read(dir)
      return [name, { type, body: new Uint8Array(body), gzipped: new Uint8Array(gzipSync(body)) }]
    }),
  )
  return assets
}

/** The answer for one viewer file, gzipped when the browser takes it. */
export function viewerFile(name: string, request: Request): Response {
  const asset = load().get(name)!
  const gzip = /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')
  const headers: Record<string, string> = { 'content-type': asset.type, 'cache-control': CACHE, vary: 'accept-encoding', 'x-content-type-options': 'nosniff' }
  if (gzip) headers['content-encoding'] = 'gzip'
  return new Response(gzip ? asset.gzipped : asset.body, { headers })
}
