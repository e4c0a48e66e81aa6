/**
 * The console app's files: its own pages and modules (web/), and the browser libraries it uses,
 * read from node_modules (no CDN, no build step). All of them live under one versioned path,
 * `/console/app/v/<version>/…`, where the version is a hash of every file: a changed file is a
 * new path, so each may be cached for a year; only the page itself is revalidated (its ETag).
 * Each file is compressed once, on first request (brotli, else gzip for the browser that takes it).
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, extname, join } from 'node:path'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'

const WEB = join(import.meta.dir, 'web')
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
}
/** Versioned paths never change content. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

/** The npm files the pages load, by the name they are served under. */
const VENDOR: Record<string, { pkg: string; file: string }> = {
  'vendor/elk-api.js': { pkg: 'elkjs', file: 'lib/elk-api.js' },
  'vendor/elk-worker.min.js': { pkg: 'elkjs', file: 'lib/elk-worker.min.js' },
}

interface Asset {
  type: string
  body: Uint8Array<ArrayBuffer>
  etag: string
  gzip?: Uint8Array<ArrayBuffer>
  br?: Uint8Array<ArrayBuffer>
}

const bytes = (b: Buffer): Uint8Array<ArrayBuffer> => new Uint8Array(b)

export class AppAssets {
  readonly version: string
  private readonly files = new Map<string, Asset>()
  private readonly page: Asset

  constructor() {
    const require = createRequire(import.meta.url)
    const hash = createHash('sha256')
    for (const name of readdirSync(WEB).sort()) {
      if (name === 'index.html') continue
      const body = readFileSync(join(WEB, name))
      hash.update(name).update(body)
      this.files.set(name, this.asset(name, body))
    }
    for (const [name, { pkg, file }] of Object.entries(VENDOR)) {
      const body = readFileSync(join(dirname(require.resolve(`${pkg}/package.json`)), file))
      hash.update(name).update(body)
      this.files.set(name, this.asset(name, body))
    }
    this.version = hash.digest('hex').slice(0, 12)
    // The page names the versioned folder its modules load from.
    const html = readFileSync(join(WEB, 'index.html'), 'utf8').replaceAll('{{base}}', `/console/app/v/${this.version}`)
    this.page = this.asset('index.html', Buffer.from(html))
  }

  /** Every file's name under the versioned folder (tests and the benchmark read them). */
  names(): string[] {
    return [...this.files.keys()]
  }

  /** The page: revalidated on each visit (a new version must reach a reload). */
  index(request: Request): Response {
    return this.answer(this.page, request, 'no-cache')
  }

  file(name: string, request: Request): Response | null {
    const asset = this.files.get(name)
    return asset ? this.answer(asset, request, IMMUTABLE) : null
  }

  private asset(name: string, body: Buffer): Asset {
    return { type: TYPES[extname(name)] ?? 'application/octet-stream', body: bytes(body), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` }
  }

  private answer(asset: Asset, request: Request, cache: string): Response {
    const headers: Record<string, string> = {
      'content-type': asset.type,
      'cache-control': cache,
      etag: asset.etag,
      vary: 'accept-encoding',
      'x-content-type-options': 'nosniff',
    }
    if (asset.type.startsWith('text/html')) {
      // Our own files only; the recordings play from blobs; nothing may frame the console.
      headers['content-security-policy'] =
        "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; worker-src 'self' blob:; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
      headers['referrer-policy'] = 'no-referrer'
    }
    if (request.headers.get('if-none-match') === asset.etag) return new Response(null, { status: 304, headers })
    const accepts = request.headers.get('accept-encoding') ?? ''
    if (/\bbr\b/.test(accepts)) {
      asset.br ??= bytes(brotliCompressSync(asset.body, { params: { [constants.BROTLI_PARAM_QUALITY]: asset.body.length > 200_000 ? 9 : 11, [constants.BROTLI_PARAM_SIZE_HINT]: asset.body.length } }))
      return new Response(asset.br, { headers: { ...headers, 'content-encoding': 'br' } })
    }
    if (/\bgzip\b/.test(accepts)) {
      asset.gzip ??= bytes(gzipSync(asset.body, { level: 9 }))
      return new Response(asset.gzip, { headers: { ...headers, 'content-encoding': 'gzip' } })
    }
    return new Response(asset.body, { headers })
  }
}
