import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { assertPublicHost } from '../../src/net/address-guard'
import { BlockedTargetError, FetchFailedError, MAX_REDIRECTS, safeFetch } from '../../src/net/safe-fetch'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let server: ReturnType<typeof Bun.serve>
let base: string
/** Paths the fake was asked for, to prove a blocked hop was never contacted. */
const hits: string[] = []

beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      hits.push(`${req.method} ${url.pathname}`)
      switch (url.pathname) {
        case '/hello':
          return new Response('hello from the fake', { headers: { 'content-type': 'text/plain' } })
        case '/big':
          return new Response('x'.repeat(1_000_000))
        case '/endless': {
          // Never ends by itself: only the size cap stops the read.
          const stream = new ReadableStream({
            pull(controller) {
              controller.enqueue(new Uint8Array(64 * 1024).fill(97))
            },
          })
          return new Response(stream)
        }
        case '/slow':
          await sleep(2_000)
          return new Response('too late')
        case '/dribble': {
          // Headers at once, then the body trickles: the deadline covers the body too.
          const stream = new ReadableStream({
            async pull(controller) {
              await sleep(100)
              controller.enqueue(new TextEncoder().encode('.'))
            },
          })
          return new Response(stream)
        }
        case '/to-hello':
          return Response.redirect(`${base}/hello`, 302)
        case '/to-metadata':
          return Response.redirect('http://169.254.169.254/latest/meta-data/', 302)
        case '/to-loopback':
          return Response.redirect(`${base}/secret`, 302)
        case '/loop':
          return Response.redirect(`${base}/loop`, 302)
        case '/post-303':
          return new Response(null, { status: 303, headers: { location: '/echo' } })
        case '/echo':
          return new Response(`${req.method} ${await req.text()}`)
        case '/to-file':
          return Response.redirect('file:///etc/passwd', 302)
        default:
          return new Response('secret internal data', { status: 200 })
      }
    },
  })
  base = `http://127.0.0.1:${server.port}`
})

afterAll(() => server.stop(true))

const opts = { timeoutMs: 5_000, maxBytes: 100_000 }

describe('safeFetch', () => {
  test('refuses the loopback fake by default, naming address and reason', async () => {
    const err = await safeFetch(`${base}/hello`, opts).catch((e) => e)
    expect(err).toBeInstanceOf(BlockedTargetError)
    expect(err.message).toContain('127.0.0.1')
    expect(err.message).toContain('loopback')
  })

  test('refuses localhost by name and IPv6 loopback literals', async () => {
    await expect(safeFetch(`http://localhost:${server.port}/hello`, opts)).rejects.toThrow(/localhost name/)
    await expect(safeFetch(`http://[::1]:${server.port}/hello`, opts)).rejects.toThrow(/loopback/)
    await expect(safeFetch(`http://[::ffff:127.0.0.1]:${server.port}/`, opts)).rejects.toThrow(/loopback/)
  })

  test('refuses non-http schemes and bad URLs', async () => {
    await expect(safeFetch('file:///etc/passwd', { ...opts, allowPrivate: true })).rejects.toThrow(/scheme file:/)
    const err = await safeFetch('not a url', opts).catch((e) => e)
    expect(err).toBeInstanceOf(FetchFailedError)
    expect(err.kind).toBe('bad_url')
  })

  test('reaches the fake with allowPrivate', async () => {
    const res = await safeFetch(`${base}/hello`, { ...opts, allowPrivate: true })
    expect(res.status).toBe(200)
    expect(res.text).toBe('hello from the fake')
    expect(res.headers.get('content-type')).toContain('text/plain')
    expect(res.truncated).toBe(false)
  })

  test('follows redirects and reports the final URL', async () => {
    const res = await safeFetch(`${base}/to-hello`, { ...opts, allowPrivate: true })
    expect(res.text).toBe('hello from the fake')
    expect(res.url).toBe(`${base}/hello`)
  })

  test('a redirect to a private address is refused before connecting', async () => {
    // The first hop stands in for a public site; every later hop meets the real policy.
    const firstHopOnly = async (url: URL) => (url.pathname.startsWith('/to-') ? undefined : assertPublicHost(url.hostname))
    hits.length = 0
    await expect(safeFetch(`${base}/to-metadata`, { ...opts, checkTarget: firstHopOnly })).rejects.toThrow(/169\.254\.169\.254.*link-local/)
    await expect(safeFetch(`${base}/to-loopback`, { ...opts, checkTarget: firstHopOnly })).rejects.toThrow(/loopback/)
    expect(hits).toEqual(['GET /to-metadata', 'GET /to-loopback'])
  })

  test('a redirect to another scheme is refused', async () => {
    await expect(safeFetch(`${base}/to-file`, { ...opts, allowPrivate: true })).rejects.toThrow(/scheme file:/)
  })

  test(`stops after ${MAX_REDIRECTS} redirects`, async () => {
    hits.length = 0
    const err = await safeFetch(`${base}/loop`, { ...opts, allowPrivate: true }).catch((e) => e)
    expect(err).toBeInstanceOf(FetchFailedError)
    expect(err.kind).toBe('too_many_redirects')
    expect(hits.length).toBe(MAX_REDIRECTS + 1)
  })

  test('303 after a POST continues as a GET without the body', async () => {
    const res = await safeFetch(`${base}/post-303`, { ...opts, allowPrivate: true, method: 'POST', body: 'payload' })
    expect(res.text).toBe('GET ')
  })

  test('followRedirects: false answers the 3xx itself, with its location, and contacts nothing else', async () => {
    for (const path of ['/post-303', '/to-hello']) {
      hits.length = 0
      const res = await safeFetch(`${base}${path}`, { ...opts, allowPrivate: true, method: 'POST', body: 'payload', followRedirects: false })
      expect(res.status).toBe(path === '/post-303' ? 303 : 302)
      expect(res.headers.get('location')).toBe(path === '/post-303' ? '/echo' : `${base}/hello`)
      expect(res.url).toBe(`${base}${path}`)
      expect(hits).toEqual([`POST ${path}`])
    }
  })

  test('followRedirects: false still checks the first target', async () => {
    await expect(safeFetch(`${base}/to-hello`, { ...opts, followRedirects: false })).rejects.toThrow(/loopback/)
  })

  test('caps the body at maxBytes', async () => {
    const res = await safeFetch(`${base}/big`, { ...opts, allowPrivate: true, maxBytes: 1_000 })
    expect(res.text.length).toBe(1_000)
    expect(res.truncated).toBe(true)
  })

  test('stops reading an endless body at the cap', async () => {
    const res = await safeFetch(`${base}/endless`, { ...opts, allowPrivate: true, maxBytes: 200_000 })
    expect(res.text.length).toBe(200_000)
    expect(res.truncated).toBe(true)
  })

  test('times out a server that does not answer', async () => {
    // /slow would answer after 2 s: only the 200 ms deadline can make this a timeout.
    const err = await safeFetch(`${base}/slow`, { ...opts, allowPrivate: true, timeoutMs: 200 }).catch((e) => e)
    expect(err).toBeInstanceOf(FetchFailedError)
    expect(err.kind).toBe('timeout')
  })

  test('the deadline covers a body that never finishes', async () => {
    const err = await safeFetch(`${base}/dribble`, { ...opts, allowPrivate: true, timeoutMs: 300 }).catch((e) => e)
    expect(err).toBeInstanceOf(FetchFailedError)
    expect(err.kind).toBe('timeout')
  })

  test('a name that does not resolve is a network failure naming the host', async () => {
    const resolve = async (host: string): Promise<string[]> => {
      throw new Error(`getaddrinfo ENOTFOUND ${host}`)
    }
    const err = await safeFetch('https://nowhere.invalid/', { ...opts, resolve }).catch((e) => e)
    expect(err).toBeInstanceOf(FetchFailedError)
    expect(err.kind).toBe('network')
    expect(err.message).toContain('nowhere.invalid')
  })

  test('a closed port is a network failure', async () => {
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const port = closed.port
    closed.stop(true)
    const err = await safeFetch(`http://127.0.0.1:${port}/`, { ...opts, allowPrivate: true }).catch((e) => e)
    expect(err).toBeInstanceOf(FetchFailedError)
    expect(err.kind).toBe('network')
  })
})
