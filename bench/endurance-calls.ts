/**
 * bench:endurance's phone calls: this process plays Twilio for every call as bench:soak does
 * (test/fakes/twilio.ts answers the service's REST requests; we send the signed status callbacks and
 * open each call's media stream from its TwiML), keeping SLOTS calls live at once: each slot places
 * a call through `POST /api/v1/calls`, answers it, listens for HOLD_MS (20 ms of mu-law silence
 * every 20 ms, marks echoed once their audio has played), hangs up (`stop`, the socket closed, then
 * the `completed` status callback with its duration, as Twilio sends them) and places the next.
 */
import { twilioSignature } from '../src/providers/telephony/twilio-signature'
import { streamOpening, type TwilioFake } from '../test/fakes/twilio'

const FRAME_MS = 20
const FRAME = 160
const RATE_HZ = 8_000
/** A stream the service neither refused nor spoke on this long after it opened counts as failed (bench:soak's figure). */
const ATTACH_TIMEOUT_MS = 10_000
/** Refused with 4409 while the answer's status callback is still being applied: retried this often, this many times (bench:soak's). */
const ATTACH_RETRY_MS = 50
const ATTACH_RETRIES = 20
/** How long Twilio waits for a status callback's answer (its documented webhook timeout). */
const CALLBACK_TIMEOUT_MS = 15_000
/** A slot whose placement was refused waits this long before the next try, so a refusing service is not hammered. */
const REFUSED_BACKOFF_MS = 1_000
const SILENCE_B64 = Buffer.alloc(FRAME, 0xff).toString('base64')

/** What each call's agent says first: bench:soak's clinic reminder (15–16 s of espeak-ng speech), its first sentence the call's own. */
const NAMES = ['Maria', 'James', 'Aisha', 'Chen', 'Olga', 'Pedro', 'Fatima', 'Liam', 'Priya', 'Noah']
const purposeOf = (i: number) =>
  `Hello ${NAMES[i % NAMES.length]}, this is the clinic calling about your appointment on Monday at ${1 + (i % 12)}. We would like to confirm the time with you, and tell you what to bring. Please have your insurance card ready, and arrive ten minutes early.`

export const callNumberOf = (slot: number) => `+1415${String(4_000_000 + slot).padStart(7, '0')}`

/** One callee: Twilio's side of a media stream, listening. */
class Callee {
  ws: WebSocket | null = null
  readonly streamSid = `MZ${crypto.randomUUID().replace(/-/g, '')}`
  chunk = 0
  startedAt = 0
  /** When the agent audio buffered so far will have played; null before any (or after a clear). */
  dryAt: number | null = null
  marks: { name: string; at: number }[] = []
  heard = false
  closed = false

  open(url: string, signature: string, token: string, callSid: string, live: Set<Callee>): Promise<number | null> {
    return new Promise((resolve) => {
      // Bun's WebSocket takes headers (its types do not say so): the upgrade carries X-Twilio-Signature as Twilio's does.
      const ws = new WebSocket(url, { headers: { 'x-twilio-signature': signature } } as never)
      this.ws = ws
      let settled = false
      const settle = (code: number | null) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve(code)
      }
      const timer = setTimeout(() => {
        ws.close()
        settle(1011)
      }, ATTACH_TIMEOUT_MS)
      ws.onopen = () => {
        // Opened after this side gave up on it: a caller who hung up does not start streaming then.
        if (settled) return ws.close()
        for (const message of streamOpening({ streamSid: this.streamSid, accountSid: 'ACbench', callSid, token })) ws.send(message)
        this.startedAt = performance.now()
        live.add(this)
      }
      ws.onmessage = (e) => {
        settle(null)
        this.receive(String(e.data))
      }
      ws.onclose = (e) => {
        this.closed = true
        live.delete(this)
        settle(e.code)
      }
    })
  }

  receive(raw: string): void {
    const now = performance.now()
    const m = JSON.parse(raw) as { event: string; media?: { payload: string }; mark?: { name: string } }
    if (m.event === 'media') {
      const samples = (m.media!.payload.length * 3) / 4
      this.heard = true
      this.dryAt = Math.max(this.dryAt ?? now, now) + (samples * 1000) / RATE_HZ
    } else if (m.event === 'mark') {
      this.marks.push({ name: m.mark!.name, at: this.dryAt ?? now })
      this.echoDue(now)
    } else if (m.event === 'clear') {
      this.dryAt = null
      for (const mark of this.marks.splice(0)) this.echo(mark.name)
    }
  }

  /** Twilio's 20 ms: the caller's frames due go out, marks whose audio has played are echoed. */
  tick(now: number): void {
    const due = Math.floor((now - this.startedAt) / FRAME_MS)
    while (this.chunk < due && !this.closed) {
      this.chunk++
      this.ws!.send(
        `{"event":"media","sequenceNumber":"${this.chunk + 1}","media":{"track":"inbound","chunk":"${this.chunk}","timestamp":"${this.chunk * FRAME_MS}","payload":"${SILENCE_B64}"},"streamSid":"${this.streamSid}"}`,
      )
    }
    this.echoDue(now)
  }

  echoDue(now: number): void {
    while (this.marks.length && this.marks[0]!.at <= now) this.echo(this.marks.shift()!.name)
  }

  echo(name: string): void {
    if (!this.closed) this.ws?.send(JSON.stringify({ event: 'mark', sequenceNumber: String(this.chunk + 1), streamSid: this.streamSid, mark: { name } }))
  }

  hangUp(live: Set<Callee>): void {
    live.delete(this)
    if (this.closed || !this.ws) return
    this.ws.send(JSON.stringify({ event: 'stop', sequenceNumber: String(this.chunk + 2), streamSid: this.streamSid, stop: { accountSid: 'ACbench', callSid: 'bench' } }))
    this.ws.close(1000)
  }
}

export interface CallStats {
  /** Call ids the service accepted (202). */
  placed: string[]
  attached: number
  attachRetries: number
  attachFailed: { code: number; count: number }[]
  heard: number
  /** Status callbacks the service did not answer 204, by status. */
  callbackFailed: Map<number, number>
  /** Slots' calls live now (their streams open). */
  live(): number
}

/**
 * Runs SLOTS calls at a time until `until` (performance.now): every slot places its next call as its
 * previous one hangs up. `request` records every answer's status (errors by status).
 */
export function runCalls(opts: {
  slots: number
  holdMs: number
  until: number
  base: string
  key: string
  fake: TwilioFake
  request: (label: string, method: string, path: string, auth: string, body?: unknown) => Promise<{ status: number; body: any }>
}): { stats: CallStats; done: Promise<void>; stop(): void } {
  const live = new Set<Callee>()
  const attachFailed = new Map<number, number>()
  const placed: string[] = []
  const stats: CallStats = {
    placed,
    attached: 0,
    attachRetries: 0,
    get attachFailed() {
      return [...attachFailed].map(([code, count]) => ({ code, count }))
    },
    heard: 0,
    callbackFailed: new Map(),
    live: () => live.size,
  }
  const pacer = setInterval(() => {
    const now = performance.now()
    for (const c of live) c.tick(now)
  }, FRAME_MS)
  /** The fake's record of the call the service placed for `id`, searched from the newest. */
  const sentFor = (id: string) => {
    const calls = opts.fake.calls
    for (let i = calls.length - 1; i >= 0; i--) if (calls[i]!.form.get('Twiml')?.includes(`/media/${id}"`)) return calls[i]
    return undefined
  }
  const callback = async (sid: string, params: Record<string, string>) => {
    // Twilio gives a status callback 15 s to answer; -1 is no answer in that time.
    const status = await Promise.race([opts.fake.callback(sid, params).catch(() => 0), Bun.sleep(CALLBACK_TIMEOUT_MS).then(() => -1)])
    if (status !== 204) stats.callbackFailed.set(status, (stats.callbackFailed.get(status) ?? 0) + 1)
    return status
  }

  const oneCall = async (slot: number, n: number) => {
    const r = await opts.request('POST /api/v1/calls', 'POST', '/api/v1/calls', opts.key, { to: callNumberOf(slot), purpose: purposeOf(n) })
    if (r.status !== 202) return void (await Bun.sleep(REFUSED_BACKOFF_MS))
    const id = r.body.id as string
    placed.push(id)
    const sent = sentFor(id)
    if (!sent) return void attachFailed.set(-1, (attachFailed.get(-1) ?? 0) + 1)
    const answeredAt = performance.now()
    await callback(sent.sid, { CallStatus: 'in-progress' })
    const twiml = sent.form.get('Twiml')!
    const streamUrl = /<Stream url="([^"]+)"/.exec(twiml)![1]!
    const mediaToken = /<Parameter name="token" value="([^"]+)"\/>/.exec(twiml)![1]!
    // The TwiML names the service's PUBLIC_BASE_URL (localhost:port); we dial the loopback address it serves on.
    const dial = streamUrl.replace(/^ws:\/\/[^/]+/, opts.base.replace(/^http/, 'ws'))
    const signature = twilioSignature(opts.fake.authToken, streamUrl, {})
    let callee: Callee | null = null
    for (let attempt = 0; ; attempt++) {
      const c = new Callee()
      const closed = await c.open(dial, signature, mediaToken, sent.sid, live)
      if (closed === null) {
        callee = c
        stats.attached++
        break
      }
      if (closed !== 4409 || attempt >= ATTACH_RETRIES) {
        attachFailed.set(closed, (attachFailed.get(closed) ?? 0) + 1)
        break
      }
      stats.attachRetries++
      await Bun.sleep(ATTACH_RETRY_MS)
    }
    const hangAt = Math.min(opts.until, (callee?.startedAt ?? answeredAt) + opts.holdMs)
    while (performance.now() < hangAt && !(callee?.closed ?? true)) await Bun.sleep(Math.min(250, Math.max(1, hangAt - performance.now())))
    if (callee?.heard) stats.heard++
    callee?.hangUp(live)
    await callback(sent.sid, { CallStatus: 'completed', CallDuration: String(Math.max(1, Math.round((performance.now() - answeredAt) / 1000))) })
  }

  let calls = 0
  const slot = async (s: number) => {
    // Slots start spread over one hold, so hang-ups (and new calls) come evenly, not in waves.
    await Bun.sleep((s * opts.holdMs) / opts.slots)
    while (performance.now() < opts.until) await oneCall(s, calls++).catch(() => void attachFailed.set(-2, (attachFailed.get(-2) ?? 0) + 1))
  }
  const done = Promise.all(Array.from({ length: opts.slots }, (_, s) => slot(s))).then(() => clearInterval(pacer))
  return {
    stats,
    done,
    stop() {
      clearInterval(pacer)
      for (const c of [...live]) c.hangUp(live)
    },
  }
}
