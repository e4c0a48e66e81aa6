/**
 * bench:barge-in-rules — the barge-in rule's thresholds against the corpus's overlap cases
 * (backchannels, noises, the agent's echo, interruptions; bench/turn-corpus/cases.ts), with no
 * service and no line: each case's audio, mixed as the caller's line carries it over the agent's
 * opening (its echo at the case's -20 dB and delay), goes frame by frame through the session's
 * own caller-audio path (src/voice/caller-audio.ts: Silero VAD, the turn detector, the onset's
 * measurements against the agent's audio as it played). For each minimum of the caller's own
 * speech and each echo return loss it prints what the chart's `bargesIn` would have stopped
 * the agent for, and when: ms from the caller's first speech frame (louder than -45 dBFS) to the
 * window that decided, on the audio's own clock (the way to the line and a loaded host add to it:
 * bench:turn-taking measures those). Then the decision once the agent is quiet (src/voice/
 * interruption.ts `judgeOverlap`) on each case that stopped it: on the local engines' words (the
 * live pocketsphinx decoder fed the same line audio; its near misses of a stop word read through
 * its dictionary) and on a vendor's (the script's words): backchannels, noises and echoes
 * answered as a turn, interruptions resumed over (one-word ones apart).
 *
 *   npm run bench:barge-in-rules
 */
import { DEFAULT_VOICE } from '../../src/catalog/voices'
import { PocketsphinxLiveStt } from '../../src/providers/stt/pocketsphinx-live'
import { EspeakTts } from '../../src/providers/tts/espeak'
import { CallerAudio } from '../../src/voice/caller-audio'
import { decodeMulaw, encodeMulaw, PHONE_RATE, resample } from '../../src/voice/codecs'
import { judgeOverlap, STOP_WORDS } from '../../src/voice/interruption'
import { AgentEcho } from '../../src/voice/turn-cues/agent-echo'
import type { OnsetWindow } from '../../src/voice/turn-cues/onset'
import { voiceActivity } from '../../src/voice/vad'
import { systemBinary } from '../../test/support/system-binary'
import { AUDIBLE_DBFS } from '../../test/support/twilio-line'
import { render } from './audio'
import { CORPUS, ECHO_SPAN_MS } from './cases'

const ESPEAK = systemBinary('espeak-ng', 'apt-get install espeak-ng')
if (!ESPEAK.path) {
  console.error(`bench:barge-in-rules needs ${ESPEAK.name}: ${ESPEAK.install}`)
  process.exit(2)
}
/** bench:turn-taking's opening, said by the agent's default voice. */
const OPENING =
  'Hello, this is a courtesy call from the delivery team to confirm your parcel for tomorrow morning, which will arrive between nine and eleven at the address we have on file for you. If nobody is home, the driver will leave it with a neighbour or at the depot.'
/** The playout keeps a second ahead of the line (playout.ts LEAD_MS): the echo reference knows that much of what will play. */
const AHEAD_MS = 1_000
/** After the caller's last frame, room for the VAD's last windows. */
const AFTER_MS = 600
const MINIMA = [64, 96, 128, 160, 192, 224, 256, 320]
const LOSSES = [12, 15, 18]

const tts = new EspeakTts()
const pieces: Int16Array[] = []
for await (const pcm of tts.synthesize(OPENING, { voice: DEFAULT_VOICE, language: 'en' })) pieces.push(pcm)
const wide = new Int16Array(pieces.reduce((n, p) => n + p.length, 0))
let at = 0
for (const p of pieces) {
  wide.set(p, at)
  at += p.length
}
const agent = decodeMulaw(encodeMulaw(resample(wide, tts.sampleRate, PHONE_RATE)))
const FRAME = PHONE_RATE / 50
const dbfs = (x: Int16Array) => 10 * Math.log10(x.reduce((n, v) => n + v * v, 0) / x.length / 32768 ** 2 + 1e-12)

interface Heard {
  id: string
  family: string
  first: number | null
  /** Each speech start and window after it: when, and the onset then. */
  onsets: { at: number; onset: readonly OnsetWindow[] }[]
  /** The script's words, pocketsphinx's, whether those sound like a stop word, and the caller's speech the VAD heard (ms). */
  script: string
  sphinx: string
  soundsLikeStop: boolean
  speechMs: number
}

const cases = CORPUS.filter((c) => c.kind === 'overlap')
const heard: Heard[] = []
const sphinx = new PocketsphinxLiveStt({ decoders: 1 })
for (const [i, c] of cases.entries()) {
  if (c.kind !== 'overlap') continue
  const speech = render({ espeak: ESPEAK.path, flite: null }, c.pieces, c.voice, c.rate, 1_000 + i).pcm
  let now = 0
  const echo = new AgentEcho(() => now)
  const onsets: Heard['onsets'] = []
  const stt = await sphinx.open()
  const audio = new CallerAudio({
    vad: await voiceActivity('silero'),
    next: { push: (f) => (f.kind === 'audio' ? stt.push(resample(f.pcm, f.sampleRate, stt.sampleRate)) : stt.speech?.()) },
    now: () => now,
    over: () => false,
    started: (onset) => onsets.push({ at: now, onset }),
    goesOn: (onset) => onsets.push({ at: now, onset }),
    paused() {},
    warn: (message, err) => console.error(message, err),
    agentLevel: (from, to) => echo.loudest(from, to),
  })
  const startMs = c.echo ? 0 : c.atMs
  const endMs = c.echo ? ECHO_SPAN_MS : startMs + speech.length / 8 + AFTER_MS
  const gain = c.echo ? 10 ** (c.echo.db / 20) : 0
  const delay = c.echo ? (c.echo.delayMs * PHONE_RATE) / 1000 : 0
  let first: number | null = null
  let fed = 0
  for (let t = 0; t < endMs; t += 20) {
    for (; fed * FRAME < agent.length && fed * 20 <= t + AHEAD_MS; fed++) echo.played(agent.subarray(fed * FRAME, (fed + 1) * FRAME), PHONE_RATE, fed * 20)
    const frame = new Int16Array(FRAME)
    const from = ((t - startMs) * PHONE_RATE) / 1000
    if (!c.echo && from >= 0 && from < speech.length) {
      frame.set(speech.subarray(from, from + FRAME))
      if (first === null && dbfs(frame) > AUDIBLE_DBFS) first = t
    }
    for (let k = 0; k < FRAME && gain; k++) frame[k] = Math.max(-32768, Math.min(32767, frame[k]! + Math.round(gain * (agent[t * 8 + k - delay] ?? 0))))
    now = t + 20
    audio.push({ kind: 'audio', pcm: decodeMulaw(encodeMulaw(frame)), sampleRate: PHONE_RATE, keyTone: false })
    while (audio.judgedUpTo < now) await Bun.sleep(0)
  }
  const words = await stt.finalize()
  await stt.close()
  const script = c.pieces.map((p) => ('say' in p ? p.say : '')).join(' ')
  heard.push({ id: c.id, family: c.family, first, onsets, script, sphinx: words, soundsLikeStop: !!stt.soundsLike?.(words, STOP_WORDS), speechMs: audio.detector.spokenMs })
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)] ?? NaN
console.log(`bench:barge-in-rules — ${heard.length} overlap cases through Silero and the onset's measurements; the agent stops once its own speech over the agent reaches the minimum`)
console.log('| own speech ≥ | echo return loss | stopped for: backchannel / noise / echo | missed | decided after the first speech frame p50 / p95 / max | later than 300 ms |')
console.log('|---|---|---|---|---|---|')
for (const minMs of MINIMA)
  for (const loss of LOSSES) {
    const stops = (onset: readonly OnsetWindow[]) => onset.reduce((n, w) => n + (w.overAgentDb > -loss ? w.ms : 0), 0) >= minMs
    const falseBy = (family: string) => heard.filter((h) => h.family === family && h.onsets.some((o) => stops(o.onset))).length
    const of = (family: string) => heard.filter((h) => h.family === family).length
    const latencies: number[] = []
    let missed = 0
    for (const h of heard.filter((x) => x.family === 'interruption')) {
      const hit = h.onsets.find((o) => stops(o.onset))
      if (hit && h.first !== null) latencies.push(hit.at - h.first)
      else missed++
    }
    console.log(
      `| ${minMs} ms | ${loss} dB | ${falseBy('backchannel')}/${of('backchannel')} / ${falseBy('noise')}/${of('noise')} / ${falseBy('echo')}/${of('echo')} | ${missed} | ${pct(latencies, 50)} / ${pct(latencies, 95)} / ${Math.max(...latencies)} ms | ${latencies.filter((l) => l > 300).length} |`,
    )
  }

// Once quiet (the rule as shipped: the caller's own speech ≥ MIN_INTERRUPTION_MS, echo 15 dB), what the agent does.
const stoppedBy = heard.filter((h) => h.onsets.some((o) => o.onset.reduce((n, w) => n + (w.overAgentDb > -15 ? w.ms : 0), 0) >= 64))
const ONE_WORD = new Set(['Stop.', 'No.', 'Wait.', 'Hold on.'])
console.log('')
console.log('The decision once the agent is quiet (src/voice/interruption.ts), on the cases that stopped it (own speech ≥ 64 ms, 15 dB)')
console.log('| words | backchannels answered as a turn | noises / echoes answered | interruptions resumed over | one-word interruptions resumed over |')
console.log('|---|---|---|---|---|')
for (const [name, wordsJudge] of [
  ['local (pocketsphinx)', false],
  ['hosted (the script’s words)', true],
] as const) {
  const turn = (h: Heard) => !judgeOverlap({ text: wordsJudge ? h.script : h.sphinx, speechMs: h.speechMs, wordsJudge, soundsLikeStop: !wordsJudge && h.soundsLikeStop }).backchannel
  const of = (family: string, pick: (h: Heard) => boolean) => `${stoppedBy.filter((h) => h.family === family && pick(h)).length}/${heard.filter((h) => h.family === family).length}`
  const oneWord = (h: Heard) => ONE_WORD.has(h.script)
  const missed = heard.filter((h) => h.family === 'interruption' && (!stoppedBy.includes(h) || !turn(h)))
  console.log(
    `| ${name} | ${of('backchannel', turn)} | ${of('noise', turn)} / ${of('echo', turn)} | ${missed.length}/${heard.filter((h) => h.family === 'interruption').length} | ${missed.filter(oneWord).length}/${heard.filter(oneWord).length} |`,
  )
  for (const h of stoppedBy.filter((x) => (x.family === 'interruption') !== turn(x)))
    console.log(`    ${h.id} "${h.script}" heard "${wordsJudge ? h.script : h.sphinx}", ${h.speechMs} ms of speech: ${turn(h) ? 'answered' : 'resumed'}`)
}
await sphinx.close()
process.exit(0)
