/**
 * bench:turns — the pause a caller lives: from the end of the caller's speech to the agent's first
 * audio, measured the way the phone line sees it. The whole service runs here on 127.0.0.1 with the
 * sandbox phone network; its callee is a real Twilio Media Streams client of `/media` that speaks
 * espeak-ng sentences in real time, plays what it receives in real time and echoes marks. The
 * callee's own log gives the headline number (its last word left → the agent's first audio
 * arrived); each turn's record (`latencyTurns`) gives the stages inside the service.
 *
 *   bun bench/turns.ts                      both profiles, BENCH_TURNS (40) turns each
 *   BENCH_PROFILES=local bun bench/turns.ts
 *   BENCH_LIVE_CALLS=100 bun bench/turns.ts the same turns with 100 other calls live on the service
 *                                           (callers who say a short line after each 14–24 s of quiet)
 *
 * Profiles (set up in bench/turn-profiles.ts; every stage a profile does not replace runs on the
 * published delays of test/fakes/realistic-delays.ts):
 *  (a) local — the service's local engines: the live pocketsphinx decoder, the `local` model,
 *      espeak-ng. No network, no keys.
 *  (b) vendors — our Deepgram live, OpenAI-compatible and ElevenLabs adapters, unchanged, against
 *      the local fakes speaking each vendor's protocol.
 *  (c) cartesia — (b) with Cartesia's WebSocket voice instead of ElevenLabs.
 *  (d) assemblyai — (b) with AssemblyAI Universal-Streaming for speech-to-text, its turns judged
 *      by AssemblyAI (the utterance at a pause as the eager end, its end of turn).
 *  (e) telnyx — (b) on TELEPHONY_PROVIDER=telnyx: calls placed through the fake of Telnyx's Call
 *      Control API, the caller on Telnyx's media socket (telnyx-line.ts).
 *  (f) realtime — an agent on OpenAI Realtime through BYOK (src/voice/realtime-session.ts).
 *  (g) flux — (b) with Deepgram Flux judging the turns (its eager end on).
 * Each vendor profile prints its floor (turn-profiles.ts FLOORS: the stages in a row minus what
 * the engine overlaps) and its target, the floor + 30 ms at p50; local's target is p50 ≤ 600 ms.
 * Also the end-of-turn rules on a corpus of complete and unfinished utterances: how often they
 * would cut a caller off, and what a complete turn waits.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { callsFeature } from '../src/features/calls'
import { createLogger } from '../src/logger'
import { EspeakTts } from '../src/providers/tts/espeak'
import { startServer } from '../src/server'
import { decodeMulaw, encodeMulaw, PHONE_RATE, resample } from '../src/voice/codecs'
import { endOfTurn } from '../src/voice/end-of-turn'
import { voicedMs } from '../test/fakes/deepgram'
import { REALISTIC } from '../test/fakes/realistic-delays'
import { percentile } from './stats'
import { type LineTurn, telnyxCaller } from './telnyx-line'
import { TURN_CORPUS } from './turn-corpus'
import { FLOOR_MARGIN_MS, FLOORS, floorOf, LOCAL_TARGET_MS, setUpProfile } from './turn-profiles'

const TURNS = Number(process.env.BENCH_TURNS ?? 40)
/** BENCH_VERBOSE=1: each call's transcript and per-turn stages, to see where a slow turn went. */
const VERBOSE = process.env.BENCH_VERBOSE === '1'
const PROFILES = (process.env.BENCH_PROFILES ?? 'local,vendors').split(',').map((p) => p.trim())
/** Other calls kept live on the service while the turns are measured (issue: voice-to-voice with 100 calls live). */
const LIVE_CALLS = Number(process.env.BENCH_LIVE_CALLS ?? 0)
/**
 * What live call `i`'s caller says: a short line once the agent has been quiet 14–24 s (spread
 * over the calls so they do not all speak at once), inside the 30 s silence timeout, its caller
 * speaking ~4% of the time; twenty of them cover the longest run (a call's lines are made once).
 */
const liveLines = (i: number) => Array.from({ length: 20 }, () => `[wait ${14_000 + ((i * 1_009) % 10_000)}] Okay, thanks.`)
/** Live calls are placed at the soak's rate (bench:soak's 20 a second). */
const LIVE_RATE = 20
/** Questions a caller asks, one a turn; plain sentences with no inner pause, as a person asks them. */
const QUESTIONS = ['What time do you open on Sunday?', 'Do you have parking for customers?', 'Can I bring my dog inside?', 'How much is a large coffee?']
const KNOWLEDGE =
  'Opening hours\n\nWe open at eight on Sundays and at seven on weekdays.\n\nParking\n\nFree parking for customers is behind the shop.\n\nDogs\n\nDogs are welcome inside on a lead.\n\nPrices\n\nA large coffee costs four dollars.'
const KEY = 'sk-bench-turns-0123456789'
const REPLY = 'Sure, we open at eight on Sundays, and at seven on weekdays.'
/** A call's four questions and answers take ~20 s; one whose caller waits on an unanswered line ends here. */
const CALL_MS = 45_000

const fmt = (xs: number[]) => (xs.length ? `p50 ${Math.round(percentile(xs, 50))} ms, p95 ${Math.round(percentile(xs, 95))} ms` : 'n/a')

interface Measured {
  /** Callee side: its last word left → the agent's first audio arrived. */
  caller: number[]
  /** Lines the agent never answered (the engine heard nothing in them), or never said. */
  unanswered: number
  stages: Record<string, number[]>
  /** BENCH_LIVE_CALLS: the other calls placed, refused, and still live when the turns were done. */
  live: { placed: number; refused: number; liveAtEnd: number } | null
  /** The measured calls' POSTs refused 503 at capacity (each retried 5 s later). */
  refusedAtCapacity: number
}

/** The questions as the sandbox callee says them (espeak-ng, μ-law at 8 kHz), with their voiced ms. */
let spokenLines: { text: string; voicedMs: number; pcm: Int16Array }[] | null = null
async function spoken(): Promise<{ text: string; voicedMs: number; pcm: Int16Array }[]> {
  if (spokenLines) return spokenLines
  const tts = new EspeakTts()
  spokenLines = []
  for (const text of QUESTIONS) {
    const parts: Int16Array[] = []
    for await (const pcm of tts.synthesize(text, { voice: 'leo', language: 'en' })) parts.push(decodeMulaw(encodeMulaw(resample(pcm, tts.sampleRate, PHONE_RATE))))
    const audio = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
    let at = 0
    for (const p of parts) {
      audio.set(p, at)
      at += p.length
    }
    spokenLines.push({ text, voicedMs: voicedMs(audio, PHONE_RATE), pcm: audio })
  }
  return spokenLines
}

async function profile(name: string): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), `bench-turns-${name}-`))
  const set = await setUpProfile(name, KEY, REPLY)
  const { stops, model, voice, stt: sttFake, telnyx, realtime, flux } = set
  const env: Record<string, string> = { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'silent', TELEPHONY_PROVIDER: 'sandbox', ...set.env }
  const server = await startServer(loadConfig(env), createLogger('silent'))
  const base = server.url
  const token = server.consoleToken
  const call = async (method: string, path: string, auth: string, body?: unknown) => {
    const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: res.status, body: (await res.json().catch(() => null)) as any }
  }
  const out: Measured = { caller: [], unanswered: 0, stages: {}, live: null, refusedAtCapacity: 0 }
  try {
    const dev = (await call('POST', '/console/workspaces', token, { name: 'Bench turns', plan: 'enterprise' })).body
    const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Bean There', model, voice })).body.id
    await call('POST', `/api/v1/agents/${agent}/knowledge`, dev.key, { text: KNOWLEDGE, title: 'Shop FAQ' })
    await call('POST', `/agents/${agent}/publish`, dev.key, {})
    await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, token, { number: '+14155550100', source: 'rented', agent })
    if (realtime) await onRealtime(call, dev, agent)
    const { sandbox } = server.services.of(callsFeature)
    const tries = await server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
    const live = LIVE_CALLS > 0 ? await placeLiveCalls(call, dev, token) : null
    for (let n = 0; out.caller.length < TURNS; n++) {
      const phone = `+1415555${String(1000 + n).padStart(4, '0')}`
      if (telnyx) await call('POST', `/console/workspaces/${dev.id}/contacts`, token, { phone })
      else await sandboxPhone(call, dev, token, phone, QUESTIONS, CALL_MS)
      sttFake?.utterances.push(...(await spoken()).map(({ text, voicedMs }) => ({ text, voicedMs })))
      realtime?.heard.push(...QUESTIONS)
      flux?.utterances.push(...QUESTIONS)
      let placed = await dial(call, dev, phone)
      // At capacity the instance says when to try again (503, Retry-After): a client waits and does.
      for (let tries = 0; placed.status === 503 && tries < 20; tries++) {
        out.refusedAtCapacity++
        await Bun.sleep(5_000)
        placed = await dial(call, dev, phone)
      }
      if (placed.status !== 202) throw new Error(`POST /calls answered ${placed.status}: ${JSON.stringify(placed.body)}`)
      const id = placed.body.id as string
      // On Telnyx: answered by a signed webhook, the caller on Telnyx's socket, then Telnyx's hang-up.
      let lineTurns: LineTurn[] | null = null
      if (telnyx) {
        const ref = telnyx.calls.at(-1)!.callControlId
        await telnyx.webhook(ref, 'call.answered')
        lineTurns = await telnyxCaller(
          telnyx,
          ref,
          (await spoken()).map((l) => l.pcm),
          CALL_MS,
        )
        await telnyx.webhook(ref, 'call.hangup', { hangup_cause: 'normal_clearing' })
      }
      // The callee hangs up once it has said its lines and heard the answer to the last (or after
      // CALL_MS: a line the engine heard as nothing gets no answer, and the callee waits for one).
      const deadline = Date.now() + CALL_MS + 15_000
      let row: any = null
      let callee: ReturnType<typeof sandbox.callee> | null = null
      while (Date.now() < deadline) {
        row = (await tries.find({ callId: id }))[0]
        // Held while the call is live: the network lets go of its callee once it hangs up.
        if (!callee && !telnyx && row?.callRef) callee = sandbox.callee(row.callRef)
        if (row?.media === 'done') break
        await Bun.sleep(100)
      }
      const turns = lineTurns ?? callee?.log.turns ?? []
      for (const t of turns) if (t.agentAudioAt !== null) out.caller.push(t.agentAudioAt - t.speechEndedAt)
      if (VERBOSE) {
        console.log(`  call ${id}: caller ${JSON.stringify((callee?.log.turns ?? []).map((t) => (t.agentAudioAt === null ? null : Math.round(t.agentAudioAt - t.speechEndedAt))))}`)
        for (const l of ((await (await fetch(`${base}/api/v1/calls/${id}`, { headers: { authorization: `Bearer ${dev.key}` } })).json()) as any).transcript ?? [])
          console.log(`    ${l.role}: ${l.text ?? l.content}`)
        for (const stage of row?.latencyTurns ?? []) console.log(`    latency ${JSON.stringify(stage)}`)
      }
      for (const stage of row?.latencyTurns ?? [])
        for (const [k, v] of Object.entries(stage))
          if (typeof v === 'number') {
            out.stages[k] ??= []
            out.stages[k].push(v)
          }
      out.unanswered += turns.filter((t) => t.agentAudioAt === null).length + QUESTIONS.length - turns.length
      if (n >= 2 * Math.ceil(TURNS / QUESTIONS.length) && out.caller.length === 0) throw new Error(`no turn was answered (last call ${id}: ${row?.status}, ${row?.error ?? 'no error'})`)
    }
    if (live) {
      const states = await Promise.all(live.ids.map(async (id) => (await call('GET', `/api/v1/calls/${id}`, dev.key)).body?.status))
      out.live = { placed: LIVE_CALLS, refused: live.refused, liveAtEnd: states.filter((s) => s === 'connected').length }
    }
  } finally {
    await server.stop()
    for (const s of stops) await s()
    rmSync(dir, { recursive: true, force: true })
  }
  return out
}

type Call = (method: string, path: string, auth: string, body?: unknown) => Promise<{ status: number; body: any }>
type Developer = { id: string; key: string }

/** The developer's own OpenAI keys (BYOK), and its agent on gpt-realtime. */
async function onRealtime(call: Call, dev: Developer, agent: string): Promise<void> {
  const steps: [string, string, unknown][] = [
    ['PUT', '/api/v1/byok/keys/stt', { provider: 'openai', credentials: { apiKey: KEY, model: 'whisper-1' } }],
    ['PUT', '/api/v1/byok/keys/llm', { provider: 'openai', credentials: { apiKey: KEY, model: 'gpt-4o-mini' } }],
    ['PUT', '/api/v1/byok/keys/tts', { provider: 'openai', credentials: { apiKey: KEY, model: 'tts-1' } }],
    ['PATCH', '/api/v1/byok', { enabled: true }],
    ['PUT', `/api/v1/byok/agents/${agent}`, { model: 'gpt-realtime', voice: 'marin' }],
  ]
  for (const [method, path, body] of steps) {
    const r = await call(method, path, dev.key, body)
    if (r.status !== 200) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`)
  }
}

/** `phone` as a contact of the developer, answered by a sandbox callee who says `lines` and hangs up after `hangupAfterMs`. */
async function sandboxPhone(call: Call, dev: Developer, token: string, phone: string, lines: string[], hangupAfterMs: number): Promise<void> {
  await call('POST', `/console/workspaces/${dev.id}/contacts`, token, { phone })
  const set = await call('PUT', `/console/sandbox/phones/${encodeURIComponent(phone)}`, token, { pickup: 'answer', ringMs: 0, lines, hangupAfterMs })
  if (set.status !== 200) throw new Error(`PUT /console/sandbox/phones answered ${set.status}: ${JSON.stringify(set.body)}`)
}

/** The agent calls `phone`: POST /calls's answer. */
const dial = (call: Call, dev: Developer, phone: string) => call('POST', '/api/v1/calls', dev.key, { to: phone, purpose: 'Hello from Bean There.' })

/** BENCH_LIVE_CALLS calls to callers who keep them going (liveLines), placed at LIVE_RATE, then 5 s for the last to be answered. */
async function placeLiveCalls(call: Call, dev: Developer, token: string): Promise<{ ids: string[]; refused: number }> {
  const ids: string[] = []
  let refused = 0
  for (let i = 0; i < LIVE_CALLS; i++) {
    const phone = `+1415556${String(i).padStart(4, '0')}`
    // The longest a sandbox callee may stay (20 min, the spec's longest call): longer than any run.
    await sandboxPhone(call, dev, token, phone, liveLines(i), 1_200_000)
    const placed = await dial(call, dev, phone)
    if (placed.status === 202) ids.push(placed.body.id)
    else refused++
    await Bun.sleep(1000 / LIVE_RATE)
  }
  await Bun.sleep(5_000)
  return { ids, refused }
}

function corpus(): void {
  let cut = 0
  let unfinished = 0
  const waits: number[] = []
  for (const u of TURN_CORPUS) {
    const { waitMs } = endOfTurn(u.heard)
    if (u.goesOn) {
      unfinished++
      if (waitMs < u.pauseMs) cut++
    } else waits.push(waitMs)
  }
  console.log(`end-of-turn corpus (${TURN_CORPUS.length} utterances): cuts off ${cut} of ${unfinished} unfinished ones (${Math.round((100 * cut) / unfinished)}%); a complete turn waits ${fmt(waits)}`)
}

console.log(
  `bench:turns — ${TURNS} turns a profile; vendor delays: Deepgram final ${REALISTIC.deepgramFinalMs} ms, first LLM token ${REALISTIC.openaiFirstTokenMs} ms (+${REALISTIC.openaiTokenMs} ms a token), ElevenLabs first audio ${REALISTIC.elevenlabsFirstAudioMs} ms, Cartesia first audio ${REALISTIC.cartesiaFirstAudioMs} ms, AssemblyAI words final ${REALISTIC.assemblyaiEndMs} ms, Flux eager end ${REALISTIC.fluxEagerEndMs} ms and end of turn ${REALISTIC.fluxEndOfTurnMs} ms, Realtime VAD ${REALISTIC.realtimeVadSilenceMs} ms and first audio ${REALISTIC.realtimeFirstAudioMs} ms`,
)
corpus()
for (const name of PROFILES) {
  const m = await profile(name)
  console.log(
    `\n(${{ local: 'a', vendors: 'b', cartesia: 'c', assemblyai: 'd', telnyx: 'e', realtime: 'f', flux: 'g' }[name] ?? '-'}) ${name}: ${m.caller.length} turns answered, ${m.unanswered} lines unanswered`,
  )
  if (m.live)
    console.log(
      `  with other calls live: ${m.live.placed} placed, ${m.live.refused} refused, ${m.live.liveAtEnd} still live when the turns were done; the measured calls refused at capacity ${m.refusedAtCapacity} times`,
    )
  console.log(`  caller's last word → agent's first audio (at the caller): ${fmt(m.caller)}`)
  const floor = FLOORS[name] ? floorOf(FLOORS[name]) : null
  const target = floor ? floor.ms + FLOOR_MARGIN_MS : LOCAL_TARGET_MS
  const p50 = m.caller.length ? Math.round(percentile(m.caller, 50)) : null
  if (floor) console.log(`  floor ${floor.ms} ms (${floor.how})`)
  console.log(
    `  target p50 ≤ ${target} ms${floor ? ` (floor + ${FLOOR_MARGIN_MS})` : ''}: ${p50 === null ? 'not measured' : p50 <= target ? `met (p50 ${p50})` : `NOT met (p50 ${p50}, ${p50 - target} ms over)`}`,
  )
  const labels: Record<string, string> = {
    endpointingMs: 'end of speech → turn ended (endpointing)',
    sttMs: '→ final transcript',
    llmFirstTokenMs: '→ first LLM token (0: it came before the final, an early reply)',
    ttsFirstByteMs: 'first token → first TTS audio',
    toFirstAudioMs: 'end of speech → first agent frame sent',
    toFirstHeardMs: 'end of speech → its mark echoed (heard)',
  }
  for (const [k, label] of Object.entries(labels)) console.log(`  ${label}: ${fmt(m.stages[k] ?? [])}`)
}
process.exit(0)
