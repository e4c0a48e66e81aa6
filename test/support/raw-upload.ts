/**
 * An upload over a raw socket, as a hostile or careless client sends it: the headers (a declared
 * Content-Length, or chunked), then zeros until the answer arrives, the socket closes, or `maxBytes`
 * are sent. Nothing is buffered on this side: what is measured is what the server does with it.
 */
import { connect } from 'node:net'

export interface UploadOptions {
  /** Content-Length to declare; omitted: the body is sent chunked. */
  declared?: number
  /** The most bytes of body to send before stopping (and waiting for the answer). */
  maxBytes: number
  headers?: Record<string, string>
  /** Gives up after this long with whatever arrived (status 0 if nothing did). */
  timeoutMs: number
  /**
   * Send all `maxBytes`, 64 KiB at a time with this pause between pieces, whatever arrives
   * meanwhile, as a client that writes its whole body before reading the answer.
   */
  pacedMs?: number
}

export interface UploadResult {
  /** The answer's status, 0 if none arrived. */
  status: number
  /** The answer's body as far as it arrived. */
  body: string
  /** Milliseconds from the first byte sent to the answer's first byte (null: none). */
  answeredMs: number | null
  /** Bytes of body written before the answer arrived (or in all, when none did). */
  sentBytes: number
  /** A socket error seen (EPIPE, ECONNRESET), if any. */
  error: string | null
}

const CHUNK = Buffer.alloc(64 * 1024)

/** The body of a chunked answer, its framing taken out (as far as it arrived). */
function unchunked(raw: string): string {
  let out = ''
  let at = 0
  for (;;) {
    const line = raw.indexOf('\r\n', at)
    if (line < 0) return out
    const size = Number.parseInt(raw.slice(at, line), 16)
    if (!(size > 0)) return out
    out += raw.slice(line + 2, line + 2 + size)
    at = line + 2 + size + 2
  }
}

/** Whether `answer` holds a whole HTTP answer: its headers and the body they announce. */
function complete(answer: string): boolean {
  const end = answer.indexOf('\r\n\r\n')
  if (end < 0) return false
  const length = /\r\ncontent-length: *(\d+)/i.exec(answer.slice(0, end))
  if (length) return answer.length - end - 4 >= Number(length[1])
  return answer.endsWith('\r\n0\r\n\r\n')
}

export function rawUpload(url: string, path: string, o: UploadOptions): Promise<UploadResult> {
  const { hostname, port } = new URL(url)
  const chunked = o.declared === undefined
  const head = [
    `POST ${path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Content-Type: application/json',
    chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${o.declared}`,
    ...Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    '',
    '',
  ].join('\r\n')
  const piece = chunked ? Buffer.concat([Buffer.from(`${CHUNK.length.toString(16)}\r\n`), CHUNK, Buffer.from('\r\n')]) : CHUNK
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    const started = performance.now()
    let sent = 0
    let answer = ''
    let answeredMs: number | null = null
    let error: string | null = null
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      socket.destroy()
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)
      const end = answer.indexOf('\r\n\r\n')
      const body = answer.slice(end + 4)
      resolve({ status, body: /\r\ntransfer-encoding: *chunked/i.test(answer.slice(0, end)) ? unchunked(body) : body, answeredMs, sentBytes: sent, error })
    }
    const timer = setTimeout(finish, o.timeoutMs)
    socket.on('data', (d) => {
      answeredMs ??= performance.now() - started
      answer += d.toString('latin1')
      if (complete(answer) && (o.pacedMs === undefined || sent >= o.maxBytes)) finish()
    })
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message
      if (answeredMs !== null) finish()
    })
    socket.on('close', finish)
    const pump = () => {
      while (answeredMs === null && !finished && sent < o.maxBytes) {
        sent += CHUNK.length
        if (!socket.write(piece)) return void socket.once('drain', pump)
      }
    }
    const paced = async () => {
      while (!finished && error === null && sent < o.maxBytes) {
        const n = Math.min(CHUNK.length, o.maxBytes - sent)
        sent += n
        socket.write(chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), CHUNK.subarray(0, n), Buffer.from('\r\n')]) : CHUNK.subarray(0, n))
        await Bun.sleep(o.pacedMs!)
      }
      if (chunked && !finished && error === null) socket.write('0\r\n\r\n')
    }
    socket.once('connect', () => {
      socket.write(head)
      if (o.pacedMs === undefined) pump()
      else void paced()
    })
  })
}
