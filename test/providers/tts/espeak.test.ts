/**
 * espeak-ng in-process: libespeak-ng on synthesiser threads shared by the calls, with the program
 * (a process per sentence) where the library cannot be used. Real library, real program.
 */
import { afterEach, expect, test } from 'bun:test'
import { SpeechProviders } from '../../../src/providers/speech'
import { SandboxScripts } from '../../../src/providers/stt/sandbox'
import { EspeakTts, WORDS_PER_MINUTE, wordsPerMinute } from '../../../src/providers/tts/espeak'
import { ESPEAK_INSTALL, ESPEAK_LIBRARY, espeakLibraryMissing } from '../../../src/providers/tts/espeak-ffi'
import { EspeakPool } from '../../../src/providers/tts/espeak-pool'
import { startTestServer } from '../../support/server'
import { describeNeeding, systemBinary } from '../../support/system-binary'
import { until } from '../../support/until'

const ESPEAK = systemBinary('espeak-ng', 'apt-get install espeak-ng')
const LIBRARY = { name: 'libespeak-ng', path: espeakLibraryMissing() ? null : ESPEAK_LIBRARY, install: ESPEAK_INSTALL }
const describeLibrary = describeNeeding(ESPEAK.path ? LIBRARY : ESPEAK)

const program = new EspeakTts('espeak-ng', null)
const pools: EspeakPool[] = []
const poolOf = (size: number, library?: string) => {
  const pool = new EspeakPool({ size, library })
  pools.push(pool)
  return pool
}
afterEach(() => {
  for (const p of pools.splice(0)) p.close()
})

async function say(tts: EspeakTts, text: string, voice = 'aria', signal?: AbortSignal, speed?: number): Promise<Int16Array> {
  const parts: Int16Array[] = []
  for await (const p of tts.synthesize(text, { voice, language: 'en', signal, speed })) parts.push(p)
  const all = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    all.set(p, at)
    at += p.length
  }
  return all
}

const same = (a: Int16Array, b: Int16Array) => a.length === b.length && a.every((x, i) => x === b[i])

describeLibrary('espeak-ng in-process', () => {
  test('a fresh synthesiser says a sentence as the program does, sample for sample, in each kind of voice', async () => {
    // aria is a voice by name (en-us+f3), oliver by language (en-gb+m3), sofia another language (es+f3).
    for (const [voice, text] of [
      ['aria', 'Hello Maria, this is the clinic calling about your appointment on Monday at nine.'],
      ['oliver', 'Can I move my appointment to Friday?'],
      ['sofia', 'Hola, ¿a qué hora abren el sábado?'],
    ] as const) {
      const tts = new EspeakTts('espeak-ng', poolOf(1))
      expect(tts.sampleRate).toBe(program.sampleRate)
      const mine = await say(tts, text, voice)
      const theirs = await say(program, text, voice)
      expect(mine.length).toBeGreaterThan(10_000)
      expect(same(mine, theirs)).toBe(true)
    }
  })

  test("an agent's speed is espeak-ng's -s: the library says it as the program does, faster speech shorter", async () => {
    const tts = new EspeakTts('espeak-ng', poolOf(1))
    const text = 'Thank you for calling the bakery.'
    const fast = await say(tts, text, 'aria', undefined, 1.2)
    const own = await say(tts, text, 'aria')
    // The program told `-s 210` (175 words a minute times 1.2) says the same samples.
    expect(same(await say(new EspeakTts('espeak-ng', poolOf(1)), text, 'aria', undefined, 1.2), await say(program, text, 'aria', undefined, 1.2))).toBe(true)
    expect(fast.length).toBeLessThan(own.length * 0.9)
    expect(wordsPerMinute(1.2)).toBe(210)
    expect(wordsPerMinute(null)).toBe(WORDS_PER_MINUTE)
  })

  test('sentences asked at once all come whole from a pool of two threads', async () => {
    const pool = poolOf(2)
    const tts = new EspeakTts('espeak-ng', pool)
    const texts = [
      'what time do you open on saturday',
      'can i move my appointment to friday',
      'do i need to bring my insurance card',
      'how long will the visit take',
      'is there parking near the clinic',
      'sure',
    ]
    const together = await Promise.all(texts.map((t) => say(tts, t)))
    const alone = await Promise.all(texts.map((t) => say(program, t)))
    for (const [i, pcm] of together.entries()) {
      // A synthesiser that spoke before carries its voice's flutter and jitter into the next
      // sentence: the same words, a little longer or shorter. Measured here: a few ms on a
      // sentence, and up to ~100 ms (2,159 samples at 22.05 kHz) on the one-word "sure".
      expect(Math.abs(pcm.length - alone[i]!.length)).toBeLessThan(0.05 * alone[i]!.length + 2_500)
    }
    const stats = pool.stats()
    expect(stats.started).toBe(2)
    expect(stats.spoken).toBe(texts.length)
    expect(stats.busy).toBe(0)
    expect(stats.queued).toBe(0)
  })

  test('an aborted sentence throws AbortError and the synthesiser speaks the next one', async () => {
    const pool = poolOf(1)
    const tts = new EspeakTts('espeak-ng', pool)
    const abort = new AbortController()
    const long = 'We would like to confirm the time with you, and tell you what to bring. '.repeat(20)
    let pieces = 0
    const cut = (async () => {
      for await (const _ of tts.synthesize(long, { voice: 'aria', language: 'en', signal: abort.signal })) {
        pieces++
        abort.abort()
      }
    })()
    await expect(cut).rejects.toThrow('synthesis aborted')
    expect(pieces).toBe(1)
    const next = await say(tts, 'Sure.')
    expect(next.length).toBeGreaterThan(5_000)
    // Already aborted: nothing is spoken.
    await expect(say(tts, 'Sure.', 'aria', abort.signal)).rejects.toThrow('synthesis aborted')
  })

  test('a synthesiser thread that dies fails its sentence, and a new one speaks the next', async () => {
    const pool = poolOf(1)
    const tts = new EspeakTts('espeak-ng', pool)
    await say(tts, 'Hello.')
    const long = say(tts, 'Please have your insurance card ready, and arrive ten minutes early. '.repeat(40))
    pool.synthesizers[0]!.kill()
    await expect(long).rejects.toThrow()
    const next = await say(tts, 'Is there parking near the clinic?')
    expect(next.length).toBeGreaterThan(20_000)
    expect(pool.stats().started).toBe(1)
    expect(pool.unavailable).toBeNull()
  })

  test('where the library cannot be loaded the program speaks, and the pool says why', async () => {
    expect(espeakLibraryMissing('/nonexistent/libespeak-ng.so.1')).toContain(ESPEAK_INSTALL)
    const pool = poolOf(2, '/nonexistent/libespeak-ng.so.1')
    const tts = new EspeakTts('espeak-ng', pool)
    const text = 'Is there parking near the clinic?'
    expect(same(await say(tts, text), await say(program, text))).toBe(true)
    expect(pool.unavailable).toContain('/nonexistent/libespeak-ng.so.1')
    // Later sentences go straight to the program.
    expect((await say(tts, 'Sure.')).length).toBeGreaterThan(5_000)
  })

  test('the engine choice speaks through TTS_SYNTHESIZERS shared threads when the library loads', async () => {
    const speech = new SpeechProviders({ providers: {}, speech: { stt: 'sandbox', tts: 'espeak', vad: 'energy', chunkMs: 100, synthesizers: 1 } }, new SandboxScripts())
    try {
      const a = speech.choose({ callId: 'ca_1', sandbox: true }).tts!
      const b = speech.choose({ callId: 'ca_2', sandbox: true }).tts!
      expect(a.name).toBe('espeak')
      await Promise.all([say(a as EspeakTts, 'Hello there.'), say(b as EspeakTts, 'Good morning.')])
      expect(speech.synthesis).toMatchObject({ size: 1, started: 1, spoken: 2 })
    } finally {
      await speech.close()
    }
  })

  test("a call's agent speaks through them, and /metrics shows the threads", async () => {
    const s = await startTestServer({ TTS_PROVIDER: 'espeak', STT_PROVIDER: 'sandbox', TTS_SYNTHESIZERS: '1' })
    try {
      const synthesizers = async () => {
        const text = await (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.consoleToken}` } })).text()
        return Object.fromEntries([...text.matchAll(/^agent_platform_tts_synthesizers\{state="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]))
      }
      expect(await synthesizers()).toEqual({ busy: 0, idle: 0, queued: 0 })
      const dev = await s.developer({ plan: 'pro' })
      const agent = (await s.agent(dev.key, { name: 'Speaker', voice: { answersCalls: true } })).id
      expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155553700', source: 'rented', agent })).status).toBe(201)
      expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155553701' })).status).toBe(201)
      expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent('+14155553701')}`, { pickup: 'answer', ringMs: 0, hangupAfterMs: 4_000 })).status).toBe(200)
      const call = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155553701', purpose: 'Your order has shipped.' } })
      expect(call.status).toBe(202)
      const seen = await until(
        'the synthesisers started',
        async () => {
          await s.console('POST', '/clock/advance', { ms: 1_000 })
          return synthesizers()
        },
        (m) => m.busy! + m.idle! === 1,
      )
      expect(seen.queued).toBe(0)
      // The opening is heard (its words become the agent's line) in real time: the callee's
      // hang-up, on the manual clock, is not moved towards until it has been.
      await until(
        'the opening was heard',
        async () => (await s.api('GET', `/calls/${call.body.id}`, { key: dev.key })).body,
        (c) => !!c.transcript.find((l: { speaker: string }) => l.speaker === 'agent')?.text.startsWith('Your'),
        20_000,
      )
      const done = await until(
        'the call completed',
        async () => {
          await s.console('POST', '/clock/advance', { ms: 1_000 })
          return (await s.api('GET', `/calls/${call.body.id}`, { key: dev.key })).body
        },
        (c) => c.status === 'completed',
      )
      expect(done.transcript.find((l: { speaker: string }) => l.speaker === 'agent')?.text).toStartWith('Your')
    } finally {
      await s.stop()
    }
  }, 60_000)
})
