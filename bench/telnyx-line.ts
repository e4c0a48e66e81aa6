/**
 * bench:turns' Telnyx line (BENCH_PROFILES=telnyx): one call placed through the service on
 * TELEPHONY_PROVIDER=telnyx against the local fake of Telnyx (test/fakes/telnyx.ts), answered by a
 * signed webhook, and a caller on Telnyx's media-streaming socket that keeps real time as the
 * sandbox callee does: it streams 20 ms of PCMU every 20 ms (silence unless it is speaking), plays
 * the agent's audio at the line's rate and echoes each mark once the audio before it has played,
 * and says its next line 500 ms after the agent has finished. Per line: its last speech frame left
 * → the agent's first audible frame arrived (its last audible frame, as the sandbox callee counts its last word).
 */
import { decodeMulaw, encodeMulaw, PHONE_RATE } from '../src/voice/codecs'
import type { TelnyxFake } from '../test/fakes/telnyx'
import { AUDIBLE_DBFS, dbfs, FRAME_MS, FRAME_SAMPLES } from '../test/support/twilio-line'

/** The pause a caller leaves after the agent's last word before speaking (a person's turn gap). */
const GAP_MS = 500
/** A line with no audible answer within this long is unanswered (a turn takes ~1.5 s). */
const ANSWER_MS = 10_000

export interface LineTurn {
  speechEndedAt: number
  agentAudioAt: number | null
}

/** Says each of `lines` (8 kHz PCM) in turn on the call `callRef`'s stream; the turns as the caller measured them. */
export async function telnyxCaller(fake: TelnyxFake, callRef: string, lines: Int16Array[], callMs: number): Promise<LineTurn[]> {
  const line = await fake.stream(callRef)
  // Each frame with whether it is speech: the turn is timed from the last audible one, as the sandbox callee times its last word.
  const queue: { frame: Uint8Array; speech: boolean }[] = []
  const silence = encodeMulaw(new Int16Array(FRAME_SAMPLES))
  // The agent's audio plays from when it arrives, at the line's rate: when it will have played out.
  let playedUntil = 0
  const marks: { name: string; due: number }[] = []
  let lastSpeechAt = 0
  let waiting: LineTurn | null = null
  line.socket.on('message', (data) => {
    const m = JSON.parse(String(data))
    const now = performance.now()
    if (m.event === 'media') {
      const pcm = decodeMulaw(new Uint8Array(Buffer.from(m.media.payload, 'base64')))
      playedUntil = Math.max(playedUntil, now) + (pcm.length * 1000) / PHONE_RATE
      if (waiting && waiting.agentAudioAt === null && now > waiting.speechEndedAt && dbfs(pcm) > AUDIBLE_DBFS) waiting.agentAudioAt = now
    } else if (m.event === 'mark') marks.push({ name: m.mark.name, due: Math.max(playedUntil, now) })
    else if (m.event === 'clear') {
      playedUntil = now
      for (const mark of marks) mark.due = now
    }
  })
  let seq = 2
  const tick = setInterval(() => {
    const now = performance.now()
    const next = queue.shift()
    if (next?.speech) lastSpeechAt = now
    const frame = next?.frame
    seq++
    line.send({
      event: 'media',
      sequence_number: String(seq),
      media: { track: 'inbound', chunk: String(seq), timestamp: String(seq * FRAME_MS), payload: Buffer.from(frame ?? silence).toString('base64') },
    })
    while (marks.length && marks[0]!.due <= now) line.send({ event: 'mark', sequence_number: String(seq), mark: { name: marks.shift()!.name } })
  }, FRAME_MS)
  const until = async (ok: () => boolean, ms: number) => {
    const end = performance.now() + ms
    while (!ok() && performance.now() < end) await Bun.sleep(10)
    return ok()
  }
  const turns: LineTurn[] = []
  const deadline = performance.now() + callMs
  try {
    for (const pcm of lines) {
      // The agent has finished (its audio played, its marks echoed) and the caller has left a gap.
      if (!(await until(() => performance.now() >= playedUntil + GAP_MS && !marks.length, Math.max(0, deadline - performance.now())))) break
      for (let at = 0; at + FRAME_SAMPLES <= pcm.length; at += FRAME_SAMPLES) {
        const piece = pcm.subarray(at, at + FRAME_SAMPLES)
        queue.push({ frame: encodeMulaw(piece), speech: dbfs(piece) > AUDIBLE_DBFS })
      }
      await until(() => queue.length === 0, pcm.length / 8 + 1_000)
      const turn: LineTurn = { speechEndedAt: lastSpeechAt, agentAudioAt: null }
      waiting = turn
      turns.push(turn)
      await until(() => turn.agentAudioAt !== null, ANSWER_MS)
    }
  } finally {
    clearInterval(tick)
    line.send({ event: 'stop', sequence_number: String(seq + 1), stop: { call_control_id: callRef } })
    line.socket.close()
  }
  return turns
}
