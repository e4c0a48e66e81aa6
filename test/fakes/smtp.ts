/**
 * A local SMTP server (the `smtp-server` library) on 127.0.0.1 and a free port: it checks the
 * credentials in SMTP_URL, accepts every message and keeps it raw, with a small MIME reader for
 * what the webhook tests look at (top-level headers, a named attachment, the text part).
 */
import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  from: string
  to: string[]
  raw: string
}

export interface SmtpFake {
  url: string
  mails: ReceivedMail[]
  /** Makes the next `n` messages fail with a 4xx/5xx reply. */
  refuseNext(n: number, code?: number): void
  stop(): Promise<void>
}

export const SMTP_USER = 'hooks'
export const SMTP_PASS = 'hook-secret'

export async function startSmtp(): Promise<SmtpFake> {
  const mails: ReceivedMail[] = []
  let refuse = 0
  let refuseCode = 550
  const server = new SMTPServer({
    // Plain SMTP on loopback: no certificate to trust, so no STARTTLS and auth allowed in clear.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, done) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASS) return done(null, { user: auth.username })
      done(new Error('bad credentials'))
    },
    onData(stream, session, done) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        if (refuse > 0) {
          refuse--
          const err = Object.assign(new Error('mailbox unavailable'), { responseCode: refuseCode })
          return done(err)
        }
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        })
        done()
      })
    },
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const port = (server.server.address() as { port: number }).port
  return {
    url: `smtp://${SMTP_USER}:${SMTP_PASS}@127.0.0.1:${port}`,
    mails,
    refuseNext(n, code = 550) {
      refuse = n
      refuseCode = code
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** Unfolded top-level headers of a raw message, names lower-cased. */
export function mailHeaders(raw: string): Record<string, string> {
  const head = raw.split(/\r?\n\r?\n/)[0] ?? ''
  const out: Record<string, string> = {}
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':')
    if (i > 0) out[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
  }
  return out
}

/** The decoded bytes of the MIME part whose filename is `name` (base64 or plain). */
export function mailAttachment(raw: string, name: string): string | null {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(raw)?.[1]
  if (!boundary) return null
  for (const part of raw.split(`--${boundary}`)) {
    if (!part.includes(`filename=${name}`) && !part.includes(`filename="${name}"`)) continue
    const [head, ...rest] = part.split(/\r?\n\r?\n/)
    const body = rest.join('\n\n').trim()
    if (/content-transfer-encoding:\s*base64/i.test(head)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
    return body
  }
  return null
}
