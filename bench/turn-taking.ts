/**
 * bench:turn-taking — the turn-taking corpus (bench/turn-corpus/cases.ts, 226 cases) played to the
 * service over real Media Streams sockets, one call a case. The service runs in its own process
 * (bench/service.ts) on 127.0.0.1 with its default local engines (Silero VAD, the live
 * pocketsphinx decoder, the `local` model, espeak-ng) and TELEPHONY_PROVIDER=twilio against the
 * local Twilio fake; each caller is a Media Streams client in a process of its own
 * (bench/turn-corpus/line.ts: 20 ms μ-law frames in real time, the agent's audio played as it
 * comes, marks echoed, `clear` honoured). Everything judged crossed the socket or the API.
 *
 *   npm run bench:turn-taking                   every case, BENCH_CONCURRENCY (4) calls at a time
 *   BENCH_CASES=60 npm run bench:turn-taking    an even spread of 60 cases over the families
 *   BENCH_FAMILIES=phone-number,echo …          only those families
 *
 * Prints, against the targets (README "Benchmarks"):
 *  - false cut-off rate: unfinished turns (the caller goes on after a pause) the agent took as
 *    done at a pause: its audio or a `clear` reached the line before the caller's last word, or
 *    the call's transcript holds the turn as two caller lines (≤ 3%);
 *  - complete-turn wait: the service's endpointing of the turn's last pause (the call's
 *    `latencyTurns`: the caller's last speech → turn over), p50/p95 (p50 ≤ 250 ms); and what the
 *    caller lives, their last speech frame → the agent's first audible audio;
 *  - false barge-in rate: backchannels, noises and the agent's own echo that made it stop (a
 *    `clear`) (≤ 2%);
 *  - missed barge-in rate: interruptions with no `clear` by 500 ms after the caller's last frame (0);
 *  - clear latency: the caller's first speech frame → the `clear`, p50/p95 (p95 ≤ 300 ms).
 * Bounded: RUN_LIMIT_MS, each case's steps with their own limits; loopback only.
 */
import { rmSync } from 'node:fs'
import { startTwilioFake } from '../test/fakes/twilio'
import { systemBinary } from '../test/support/system-binary'
import { AUDIBLE_DBFS, type LineLog } from '../test/support/twilio-line'
import { serviceClient, withinMs } from './client'
import { loadavg } from './proc'
import { startBenchService } from './service'
import { percentile } from './stats'
import { canSay, findSynths, render } from './turn-corpus/audio'
import { type Case, CORPUS, synthOf } from './turn-corpus/cases'

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4)
const FAMILIES = process.env.BENCH_FAMILIES?.split(',').map((f) => f.trim())
const VERBOSE = process.env.BENCH_VERBOSE === '1'
const SYNTHS = findSynths('bench:turn-taking')
if (!SYNTHS) process.exit(2)
const chosen = CORPUS.filter((c) => (!FAMILIES || FAMILIES.includes(c.family)) && canSay(SYNTHS, c.voice))
const LIMIT = Number(process.env.BENCH_CASES ?? chosen.length)
if (!(Number.isInteger(CONCURRENCY) && CONCURRENCY >= 1 && CONCURRENCY <= 12) || !(Number.isInteger(LIMIT) && LIMIT >= 1) || !chosen.length) {
  console.error('bench:turn-taking: BENCH_CONCURRENCY must be 1–12, BENCH_CASES ≥ 1, BENCH_FAMILIES known families')
  process.exit(2)
}
/** An even spread over the corpus (every k-th case), so each family keeps its share. */
const CASES = LIMIT >= chosen.length ? chosen : Array.from({ length: LIMIT }, (_, i) => chosen[Math.floor((i * chosen.length) / LIMIT)]!)

/** A short greeting before a turn case (the caller answers it); the long purpose of bench:barge-in before an overlap case. */
const GREETING = 'Hello, how can I help you today?'
const OPENING =
  'Hello, this is a courtesy call from the delivery team to confirm your parcel for tomorrow morning, which will arrive between nine and eleven at the address we have on file for you. If nobody is home, the driver will leave it with a neighbour or at the depot.'
/** A person answers a greeting ~200–500 ms after it ends (the gap between turns in conversation). */
const ANSWER_GAP_MS = 300
/** After the caller's last frame, the longest a turn case waits for the answer: the longest end-of-turn wait (1.5 s), pocketsphinx's final (0.1 s, 2 s on a loaded host), the reply's first audio, with room. */
const TURN_AFTER_MS = 8_000
/** After an overlap: a clear later than 500 ms after the caller's last frame is a missed barge-in; a second more shows a late false one. */
const OVERLAP_AFTER_MS = 1_500
const MISSED_AFTER_MS = 500
/** The targets (README "Benchmarks", issue's numbers). */
const TARGET = { cutOff: 3, waitP50: 250, falseBargeIn: 2, missed: 0, clearP95: 300 }
/** A call refused at capacity is placed again after the service's Retry-After (5 s), this many times in all. */
const PLACE_TRIES = 6
const RETRY_AFTER_MS = 5_000
/** The service boots in about a second; on a host loaded by other work it has taken over 10 s. */
const BOOT_MS = 60_000
/** Answered and not `connected` this long after is a failed case: the service answers in well under a second. */
const CONNECT_MS = 15_000
/** From the stream opening to the caller's last frame: a greeting or 6 s of the opening, the longest case (~9 s), room for a loaded host. */
const SPOKEN_MS = 40_000
/** After the hang-up the service ends the call; the case waits for that at most this long. */
const ENDED_MS = 15_000
/** Set-up, each round of cases well under 40 s, and a minute more: past it the run stops, failed. */
const RUN_LIMIT_MS = 120_000 + Math.ceil(CASES.length / CONCURRENCY) * 40_000

const SPHINX = systemBinary('pocketsphinx_continuous', 'apt-get install pocketsphinx pocketsphinx-en-us')
if (!SPHINX.path) {
  console.error(`bench:turn-taking needs ${SPHINX.name}: ${SPHINX.install}`)
  process.exit(2)
}

const spread = (xs: number[]) => (xs.length ? `p50 ${Math.round(percentile(xs, 50))} ms, p95 ${Math.round(percentile(xs, 95))} ms (n ${xs.length})` : 'n/a')
const rate = (n: number, of: number) => (of ? `${n} of ${of} (${((100 * n) / of).toFixed(1)}%)` : 'n/a')
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met')

interface Judged {
  c: Case
  /** Turn cases: taken as done at a pause inside it; the endpointing of its last pause; the caller's last frame → agent audio. */
  cutOff?: boolean
  /** The service took the caller's words at all (a caller line, an answer, or a cut-off). */
  heard?: boolean
  waitMs?: number | null
  answerMs?: number | null
  /** Overlap cases: the agent stopped (a clear), and how long after the caller's first speech frame. */
  stopped?: boolean
  clearMs?: number | null
  note: string
}

const loadAtStart = loadavg()
const audio = CASES.map((c, i) => render(SYNTHS, c.pieces, c.voice, c.rate, 1_000 + i))
const fake = startTwilioFake()
const { service, base, dir, token } = await startBenchService('turn-taking', {
  TELEPHONY_PROVIDER: 'twilio',
  TWILIO_ACCOUNT_SID: fake.accountSid,
  TWILIO_AUTH_TOKEN: fake.authToken,
  TWILIO_API_BASE_URL: fake.url,
})
// startBenchService waits 10 s for /health; a host loaded by others can take longer to boot the service.
for (
  let by = performance.now() + BOOT_MS;
  !(await fetch(`${base}/health`).then(
    (r) => r.ok,
    () => false,
  ));
  await Bun.sleep(250)
)
  if (performance.now() > by) throw new Error(`the service did not answer /health within ${BOOT_MS / 1000} s`)
const live = new Set<Bun.Subprocess>()
const watchdog = setTimeout(() => {
  console.error(`bench:turn-taking: gave up after ${Math.round(RUN_LIMIT_MS / 60_000)} minutes; the cases judged so far:`)
  report()
  service.kill('SIGKILL')
  for (const p of live) p.kill('SIGKILL')
  process.exit(1)
}, RUN_LIMIT_MS)

const { request, must } = serviceClient(base)
const calleeOf = (i: number) => `+1415${String(6_000_000 + i).padStart(7, '0')}`

/** The caller's line process: `spoken` once its last frame left, `log` on asking, hang-up when stdin closes. */
function startLine(script: Record<string, unknown>) {
  const proc = Bun.spawn([process.execPath, `${import.meta.dir}/turn-corpus/line.ts`, JSON.stringify(script)], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' })
  live.add(proc)
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let rest = ''
  const next = async (event: string): Promise<Record<string, unknown>> => {
    for (;;) {
      const nl = rest.indexOf('\n')
      if (nl >= 0) {
        const m = JSON.parse(rest.slice(0, nl)) as Record<string, unknown>
        rest = rest.slice(nl + 1)
        if (m.event !== event) throw new Error(`the line said ${m.event}, expected ${event}`)
        return m
      }
      const { value, done } = await reader.read()
      if (done) throw new Error(`the line process ended before "${event}"`)
      rest += decoder.decode(value, { stream: true })
    }
  }
  return {
    next,
    log: async () => {
      proc.stdin.write('log\n')
      proc.stdin.flush()
      return (await next('log')).log as LineLog
    },
    speak: () => {
      proc.stdin.write('speak\n')
      proc.stdin.flush()
    },
    hangUp: async () => {
      proc.stdin.end()
      if ((await Promise.race([proc.exited, Bun.sleep(5_000).then(() => null)])) === null) proc.kill('SIGKILL')
      live.delete(proc)
    },
  }
}

const judged: Judged[] = []
let failed = 0
try {
  const dev = await must(201, 'POST', '/console/workspaces', token, { name: 'Bench turn-taking', plan: 'enterprise' })
  const agent = (await must(201, 'POST', '/api/v1/agents', dev.key, { name: 'Bean There', voice: { answersCalls: true } })).id as string
  await must(200, 'POST', `/agents/${agent}/publish`, dev.key, {})
  await must(201, 'POST', `/console/workspaces/${dev.id}/phone-numbers`, token, { number: '+14155550800', source: 'rented', agent })
  for (let i = 0; i < CASES.length; i++) await must(201, 'POST', `/console/workspaces/${dev.id}/contacts`, token, { phone: calleeOf(i) })
  const families = [...new Set(CASES.map((c) => c.family))]
  console.log(`bench:turn-taking — ${CASES.length} cases (${families.join(', ')}), ${CONCURRENCY} calls at a time; the service on its default local engines, TELEPHONY_PROVIDER=twilio`)
  console.log(`load average at the start: ${loadAtStart}`)

  const oneCase = async (i: number): Promise<Judged> => {
    const c = CASES[i]!
    // A service at capacity (its speech decoders busy) answers 503 with when to come back, as a client would.
    let placed = await request('POST', '/api/v1/calls', dev.key, { to: calleeOf(i), purpose: c.kind === 'turn' ? GREETING : OPENING })
    for (let tries = 1; placed.status === 503 && tries < PLACE_TRIES; tries++) {
      await Bun.sleep(RETRY_AFTER_MS)
      placed = await request('POST', '/api/v1/calls', dev.key, { to: calleeOf(i), purpose: c.kind === 'turn' ? GREETING : OPENING })
    }
    if (placed.status !== 202) throw new Error(`POST /calls answered ${placed.status} ${JSON.stringify(placed.body)}`)
    const id = placed.body.id as string
    const sent = fake.calls.find((f) => f.form.get('Twiml')?.includes(`/media/${id}"`))
    if (!sent) throw new Error('the service placed no call at the Twilio fake')
    const twiml = sent.form.get('Twiml')!
    const answeredAt = performance.now()
    if ((await fake.callback(sent.sid, { CallStatus: 'in-progress', AnsweredBy: 'human' })) !== 204) throw new Error("the answer's status callback failed")
    while ((await request('GET', `/api/v1/calls/${id}`, dev.key)).body?.status !== 'connected') {
      if (performance.now() - answeredAt > CONNECT_MS) throw new Error(`not connected ${CONNECT_MS / 1000} s after the answer`)
      await Bun.sleep(50)
    }
    const { pcm } = audio[i]!
    const line = startLine({
      wsUrl: /<Stream url="([^"]+)"/.exec(twiml)![1]!,
      authToken: fake.authToken,
      accountSid: fake.accountSid,
      callSid: sent.sid,
      token: /<Parameter name="token" value="([^"]+)"\/>/.exec(twiml)![1]!,
      speech: Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64'),
      when: c.kind === 'turn' ? 'after-opening' : 'into-opening',
      atMs: c.kind === 'overlap' ? c.atMs : 0,
      ...(c.kind === 'overlap' && c.echo ? { echo: c.echo } : {}),
    })
    let log: LineLog
    try {
      if (c.kind === 'turn') {
        // The transcript's agent line grows as the caller hears it (marks): once it holds the whole
        // greeting, the agent listens, and the caller answers after a person's pause.
        const heardBy = performance.now() + SPOKEN_MS
        while (!(await request('GET', `/api/v1/calls/${id}`, dev.key)).body?.transcript?.some((l: any) => l.speaker === 'agent' && l.text === GREETING)) {
          if (performance.now() > heardBy) throw new Error('the greeting never finished playing')
          await Bun.sleep(50)
        }
        await Bun.sleep(ANSWER_GAP_MS)
        line.speak()
      }
      await withinMs(SPOKEN_MS, 'the caller never spoke', line.next('spoken'))
      if (c.kind === 'overlap') await Bun.sleep(OVERLAP_AFTER_MS)
      else {
        // Until the agent answers (an agent line after the caller's, growing as it is heard), or TURN_AFTER_MS.
        const by = performance.now() + TURN_AFTER_MS
        while (performance.now() < by) {
          const t: any[] = (await request('GET', `/api/v1/calls/${id}`, dev.key)).body?.transcript ?? []
          const said = t.findIndex((l) => l.speaker === 'customer')
          if (said >= 0 && t.slice(said).some((l) => l.speaker === 'agent')) break
          await Bun.sleep(100)
        }
      }
      log = await withinMs(10_000, 'the line process', line.log())
    } finally {
      await line.hangUp()
      await fake.callback(sent.sid, { CallStatus: 'completed', CallDuration: String(Math.max(1, Math.round((performance.now() - answeredAt) / 1000))) }).catch(() => 0)
    }
    const endedBy = performance.now() + ENDED_MS
    let call: any = null
    while (performance.now() < endedBy) {
      call = (await request('GET', `/console/workspaces/${dev.id}/calls/${id}`, token).catch(() => null))?.body
      if (call && call.status !== 'connected' && call.media !== 'live') break
      await Bun.sleep(100)
    }
    if (process.env.BENCH_DEBUG)
      console.log(
        JSON.stringify({
          status: call?.status,
          media: call?.media,
          transcript: call?.transcript,
          latencyTurns: call?.latencyTurns,
          clears: log.clears,
          first: log.callerFrames.find((f) => f.speech)?.at,
          media0: log.media.filter((m) => m.dbfs > -45).map((m) => Math.round(m.at)),
        }),
      )
    return judge(c, log, call)
  }

  let next = 0
  const worker = async () => {
    for (let i = next++; i < CASES.length; i = next++) {
      const r = await oneCase(i).catch((err: unknown) => {
        failed++
        console.log(`  ${CASES[i]!.id}: failed — ${err instanceof Error ? err.message : err}`)
        return null
      })
      if (!r) continue
      judged.push(r)
      if (judged.length % 20 === 0) console.log(`  … ${judged.length} of ${CASES.length} cases judged (load average ${loadavg()})`)
      if (VERBOSE || r.cutOff || (r.stopped && r.c.label !== 'interruption') || (r.c.label === 'interruption' && !r.stopped))
        console.log(`  ${r.c.id} (${r.c.label}, ${r.c.voice} ${r.c.rate}): ${r.note}`)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  report()
} finally {
  clearTimeout(watchdog)
  service.kill()
  await Promise.race([service.exited, Bun.sleep(5_000)])
  await fake.stop()
  rmSync(dir, { recursive: true, force: true })
}
process.exit(failed > CASES.length / 10 || !judged.length ? 1 : 0)

function judge(c: Case, log: LineLog, call: any): Judged {
  const first = log.callerFrames.find((f) => f.speech)?.at ?? null
  const last = log.callerFrames.findLast((f) => f.speech)?.at ?? null
  if (c.kind === 'overlap') {
    // An echo-only case has no caller speech: any clear at all stopped the agent for its own voice.
    const from = first ?? 0
    const clear = log.clears.find((at) => at >= from - 20) ?? null
    const stopped = clear !== null && (last === null || clear <= last + OVERLAP_AFTER_MS)
    const inTime = clear !== null && last !== null && clear <= last + MISSED_AFTER_MS
    return {
      c,
      stopped: c.label === 'interruption' ? inTime : stopped,
      clearMs: clear !== null && first !== null ? clear - first : null,
      note: clear === null ? 'no clear' : `clear ${Math.round(clear - (first ?? clear))} ms after the first speech frame`,
    }
  }
  if (first === null || last === null) throw new Error('the caller sent no speech frame')
  const agentOver = log.media.filter((m) => m.at > first && m.at <= last && m.dbfs > AUDIBLE_DBFS).length
  const clearsOver = log.clears.filter((at) => at > first && at <= last + 300).length
  const customerLines = (call?.transcript ?? []).filter((l: any) => l.speaker === 'customer')
  const turns: any[] = call?.latencyTurns ?? []
  const answer = log.media.find((m) => m.at > last && m.dbfs > AUDIBLE_DBFS)
  const cutOff = agentOver > 0 || clearsOver > 0 || customerLines.length > 1
  return {
    c,
    cutOff,
    heard: cutOff || customerLines.length > 0 || turns.length > 0 || answer !== undefined,
    waitMs: turns.length ? turns.at(-1).endpointingMs : null,
    answerMs: answer ? answer.at - last : null,
    note: `${cutOff ? 'CUT OFF: ' : ''}agent audio over the turn ${agentOver * 20} ms, clears ${clearsOver}, caller lines ${JSON.stringify(customerLines.map((l: any) => l.text))}, endpointing ${JSON.stringify(turns.map((t) => t.endpointingMs))}`,
  }
}

function report(): void {
  const unheard = judged.filter((j) => j.c.kind === 'turn' && !j.heard)
  const turnCases = judged.filter((j) => j.c.kind === 'turn' && j.heard)
  // Every turn with a pause inside: the unfinished ones, and the complete ones with a short pause (a cut there is as false).
  const unfinished = turnCases.filter((j) => j.c.pieces.some((p) => 'pauseMs' in p))
  const completes = turnCases.filter((j) => j.c.label === 'complete')
  const cut = unfinished.filter((j) => j.cutOff)
  const waits = turnCases.filter((j) => !j.cutOff && j.waitMs != null).map((j) => j.waitMs!)
  const answers = turnCases.filter((j) => !j.cutOff && j.answerMs != null).map((j) => j.answerMs!)
  const unanswered = turnCases.filter((j) => j.waitMs == null).length
  const others = judged.filter((j) => j.c.kind === 'overlap' && j.c.label !== 'interruption')
  const falseStops = others.filter((j) => j.stopped)
  const interruptions = judged.filter((j) => j.c.label === 'interruption')
  const missed = interruptions.filter((j) => !j.stopped)
  const clears = interruptions.filter((j) => j.stopped && j.clearMs !== null).map((j) => j.clearMs!)
  const cutRate = unfinished.length ? (100 * cut.length) / unfinished.length : NaN
  const falseRate = others.length ? (100 * falseStops.length) / others.length : NaN
  const byFamily = (xs: Judged[], bad: (j: Judged) => boolean) =>
    [...new Set(xs.map((j) => j.c.family))].map((f) => `${f} ${xs.filter((j) => j.c.family === f && bad(j)).length}/${xs.filter((j) => j.c.family === f).length}`).join(', ')
  console.log('')
  console.log(`false cut-offs (turns with a pause inside taken as done at one): ${rate(cut.length, unfinished.length)} — target ≤ ${TARGET.cutOff}%: ${verdict(cutRate <= TARGET.cutOff)}`)
  console.log(`  by family: ${byFamily(unfinished, (j) => !!j.cutOff)}; complete turns split: ${completes.filter((j) => j.cutOff).length} of ${completes.length}`)
  for (const synth of ['espeak-ng', 'flite'] as const) {
    const mine = (xs: Judged[]) => xs.filter((j) => synthOf(j.c.voice) === synth)
    console.log(
      `  ${synth}: false cut-offs ${rate(mine(cut).length, mine(unfinished).length)}; complete-turn wait ${spread(
        mine(completes)
          .filter((j) => !j.cutOff && j.waitMs != null)
          .map((j) => j.waitMs!),
      )}`,
    )
  }
  console.log(
    `complete-turn wait (caller's last speech → turn over, the service's endpointing): ${spread(waits)} — target p50 ≤ ${TARGET.waitP50} ms: ${verdict(waits.length > 0 && percentile(waits, 50) <= TARGET.waitP50)}`,
  )
  console.log(
    `  complete cases ${spread(completes.filter((j) => !j.cutOff && j.waitMs != null).map((j) => j.waitMs!))}; unfinished cases ${spread(unfinished.filter((j) => !j.cutOff && j.waitMs != null).map((j) => j.waitMs!))}`,
  )
  console.log(`  caller's last speech frame → the agent's first audible audio, at the caller: ${spread(answers)}; turns never answered: ${unanswered}`)
  console.log(
    `false barge-ins (the agent stopped for a backchannel, a noise or its own echo): ${rate(falseStops.length, others.length)} — target ≤ ${TARGET.falseBargeIn}%: ${verdict(falseRate <= TARGET.falseBargeIn)}`,
  )
  console.log(`  by family: ${byFamily(others, (j) => !!j.stopped)}`)
  console.log(
    `missed barge-ins (no clear by ${MISSED_AFTER_MS} ms after the caller's last frame): ${rate(missed.length, interruptions.length)} — target ${TARGET.missed}: ${verdict(missed.length === 0 && interruptions.length > 0)}`,
  )
  console.log(`clear after the interruption's first speech frame: ${spread(clears)} — target p95 ≤ ${TARGET.clearP95} ms: ${verdict(clears.length > 0 && percentile(clears, 95) <= TARGET.clearP95)}`)
  console.log(`cases judged ${judged.length} of ${CASES.length}, failed ${failed}; load average at the end: ${loadavg()}`)
  // A host so loaded that the VAD falls 2 s behind the line drops the caller's frames (MAX_INBOUND_PENDING): nothing above then measures the rules.
  if (unheard.length)
    console.log(
      `turn cases the service never heard (no caller line, no answer; left out above): ${unheard.length} of ${unheard.length + turnCases.length}${unheard.length > turnCases.length ? ' — MOST: the host is too loaded for these numbers to mean anything' : ''}`,
    )
}
