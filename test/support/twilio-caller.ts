/**
 * The caller's side of a Twilio line, run as its own process by TwilioCaller (twilio-line.ts).
 * argv[2]: the CallerScript as JSON (speech as base64 of 16-bit PCM). Writes one JSON message a
 * line to stdout: `spoken` once the caller's last frame has left, `log` (what the line recorded)
 * for each `log` line read on stdin. stdin closing hangs up.
 */
import { TwilioLine } from './twilio-line'

const script = JSON.parse(process.argv[2]!) as { wsUrl: string; authToken: string; accountSid: string; callSid: string; token: string; speech: string; bargeInAtMs: number }
const bytes = Buffer.from(script.speech, 'base64')
const speech = new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
const frames = Math.floor(speech.length / 160)
const say = (m: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(m)}\n`)

const line = await TwilioLine.open(script.wsUrl, script)
let started = false
let spoken = false
line.onTick((l) => {
  if (!started && l.playedMs >= script.bargeInAtMs) {
    started = true
    l.say(speech)
  }
  if (started && !spoken && l.log.callerFrames.length >= frames) {
    spoken = true
    say({ event: 'spoken' })
  }
})

let input = ''
for await (const chunk of Bun.stdin.stream()) {
  input += new TextDecoder().decode(chunk)
  for (let nl = input.indexOf('\n'); nl >= 0; nl = input.indexOf('\n')) {
    if (input.slice(0, nl).trim() === 'log') say({ event: 'log', log: line.log })
    input = input.slice(nl + 1)
  }
}
line.close()
process.exit(0)
