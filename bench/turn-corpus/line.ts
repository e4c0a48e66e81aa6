/**
 * One corpus case's caller on a Twilio line (test/support/twilio-line.ts), in a process of its own
 * as in bench:barge-in, so a stall of the service delays what it sends, not when the line notices.
 * argv[2]: the script as JSON (speech as base64 of 8 kHz 16-bit PCM). The caller speaks:
 *  - `after-opening`: when told (`speak` on stdin: the bench sees the opening stored as played);
 *  - `into-opening`: once `atMs` of the agent's audio has played (over the agent).
 * With `echo`, the agent's audio leaks back into the line from the start. Writes `spoken` once
 * the caller's last frame has left (for an echo-only case: once `atMs` of agent audio played or
 * the opening ended), and answers each `log` line on stdin with what the line recorded. stdin
 * closing hangs up.
 */
import { TwilioLine } from '../../test/support/twilio-line'

/** An opening that sounds over (its audio ended this long ago) while the caller waits for the cue: it is over. */
const QUIET_MS = 400

const script = JSON.parse(process.argv[2]!) as {
  wsUrl: string
  authToken: string
  accountSid: string
  callSid: string
  token: string
  speech: string
  when: 'after-opening' | 'into-opening'
  atMs: number
  echo?: { db: number; delayMs: number }
}
const bytes = Buffer.from(script.speech, 'base64')
const speech = new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
const frames = Math.floor(speech.length / 160)
const say = (m: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(m)}\n`)

const line = await TwilioLine.open(script.wsUrl, script)
if (script.echo) line.leak(script.echo.db, script.echo.delayMs)
let started = false
let spoken = false
let quietTicks = 0
const start = () => {
  if (started) return
  started = true
  line.say(speech)
}
line.onTick((l) => {
  const last = l.log.played.at(-1)
  quietTicks = last && last.samples === 0 ? quietTicks + 1 : 0
  if (script.when === 'into-opening' && (l.playedMs >= script.atMs || (l.playedMs > 0 && quietTicks * 20 >= QUIET_MS))) start()
  if (started && !spoken && l.log.callerFrames.length >= frames) {
    spoken = true
    say({ event: 'spoken' })
  }
})

let input = ''
for await (const chunk of Bun.stdin.stream()) {
  input += new TextDecoder().decode(chunk)
  for (let nl = input.indexOf('\n'); nl >= 0; nl = input.indexOf('\n')) {
    const command = input.slice(0, nl).trim()
    if (command === 'log') say({ event: 'log', log: line.log })
    else if (command === 'speak') start()
    input = input.slice(nl + 1)
  }
}
line.close()
process.exit(0)
