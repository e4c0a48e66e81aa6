/**
 * Voice in the browser: headless Chromium's fake microphone plays an espeak-ng WAV of a
 * question (looped, as Chromium does, so the question comes again while the agent answers); the
 * widget's call button streams it as 16-bit PCM over the media bridge; the agent's audio is
 * received and played through the jitter buffer; the repeated question barges in and `clear`
 * empties playback; the call is a `voice` call on the `web` surface, listed by GET /calls. The
 * same over WebRTC (the page's first choice): Opus both ways through werift.
 * Speech-to-text is the OpenAI transcription fake (pocketsphinx cannot be relied on to hear a
 * sentence exactly): it proves the microphone's audio reached it as WAV, and names the words.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'puppeteer-core'
import { WaveFile } from 'wavefile'
import { callsFeature } from '../../src/features/calls'
import { messagesSpec } from '../../src/features/conversations/public'
import { type SpeechFake, startSpeechFake } from '../fakes/speech-vendors'
import { artifactDir, CHROMIUM, launchChromium } from '../support/browser'
import { startTestServer, type TestServer } from '../support/server'
import { describeNeeding, systemBinary } from '../support/system-binary'
import { until } from '../support/until'

const ESPEAK = systemBinary('espeak-ng', 'apt-get install espeak-ng')
const describeVoice = ESPEAK.path ? describeNeeding(CHROMIUM) : describeNeeding(ESPEAK)
const KEY = 'sk-web-voice-0000'
const QUESTION = 'What are your opening hours on Sunday?'
const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.`

/** The question with 2.5 s of silence before and 4 s after: Chromium loops the file, so it is asked about every 9 s. */
function questionWav(dir: string): string {
  const spoken = join(dir, 'spoken.wav')
  const r = spawnSync(ESPEAK.path!, ['-v', 'en', '-s', '150', '-w', spoken, QUESTION])
  if (r.status !== 0) throw new Error(`espeak-ng failed: ${r.stderr}`)
  const wav = new WaveFile(readFileSync(spoken))
  const rate = (wav.fmt as { sampleRate: number }).sampleRate
  // wavefile's types say Float64Array whatever array type is asked for.
  const speech = wav.getSamples(false, Int16Array) as unknown as Int16Array
  const out = new Int16Array(Math.round(rate * 2.5) + speech.length + rate * 4)
  out.set(speech, Math.round(rate * 2.5))
  const padded = new WaveFile()
  padded.fromScratch(1, rate, '16', out)
  const path = join(dir, 'question.wav')
  writeFileSync(path, padded.toBuffer())
  return path
}

describeVoice('a call from the widget in Chromium', () => {
  let s: TestServer
  let fake: SpeechFake
  let browser: Browser
  let dir: string
  let dev: { id: string; key: string }
  let webKey: string

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'web-voice-'))
    fake = startSpeechFake(KEY)
    fake.transcript = QUESTION
    s = await startTestServer({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${fake.url}/v1`, STT_PROVIDER: 'openai', TTS_PROVIDER: 'espeak' })
    dev = await s.developer({ plan: 'scale' })
    const r = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Bean There', model: 'local', greeting: 'Hello, Bean There here.', voice: { recordCalls: true } } })
    expect(r.status).toBe(201)
    webKey = r.body.webKey
    expect((await s.api('POST', `/agents/${r.body.id}/knowledge`, { key: dev.key, body: { text: FAQ, title: 'Shop FAQ' } })).status).toBe(201)
    const pub = await fetch(`${s.url}/agents/${r.body.id}/publish`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: '{}' })
    expect(pub.status).toBe(200)
    browser = await launchChromium([
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${questionWav(dir)}`,
      '--autoplay-policy=no-user-gesture-required',
      '--disable-features=WebRtcHideLocalIpsWithMdns',
    ])
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await s?.stop()
    fake?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  const stats = (page: Page) => page.evaluate(() => ({ ...(window as any).AgentVoice.stats })) as Promise<Record<string, any>>

  test('over the WebSocket bridge: the question is heard, the answer played, an interruption clears playback, the call is listed', async () => {
    const page = await browser.newPage()
    await page.goto(`${s.url}/w/${webKey}?transport=websocket`)
    const button = await page.waitForSelector('.bar button.call:not([hidden])', { timeout: 20_000 })
    expect(await button!.evaluate((b) => b.getAttribute('aria-label'))).toBe('Call Bean There')
    await button!.click()
    expect(await button!.evaluate((b) => b.getAttribute('aria-pressed'))).toBe('true')
    // The greeting arrives and plays; the microphone's frames go up.
    await until(
      'the greeting played',
      () => stats(page),
      (x) => x.samplesPlayed > 16_000 && x.framesSent > 50,
      30_000,
    )
    // The question reached speech-to-text as audio (a WAV of the caller's words).
    const heard = await until(
      'a transcription',
      async () => fake.requests.filter((r) => r.path === '/v1/audio/transcriptions'),
      (r) => r.length > 0,
      30_000,
    )
    expect(heard[0]!.body.riff).toBe('RIFF')
    expect(heard[0]!.body.bytes).toBeGreaterThan(16_000)
    const callId = (await stats(page)).callId as string
    // The agent answers from knowledge, its audio received and played; the question, asked again over it, clears playback.
    const call = () => s.api('GET', `/calls/${callId}`, { key: dev.key }).then((r) => r.body)
    await until(
      'an interruption',
      () => stats(page),
      (x) => x.clears > 0,
      40_000,
    )
    const during = await stats(page)
    expect(during.framesReceived).toBeGreaterThan(20)
    expect(during.marksEchoed).toBeGreaterThan(5)
    await until('the answer in the transcript', call, (c) => c.transcript.some((l: any) => l.speaker === 'agent' && /open from 7 am/.test(l.text)), 30_000)
    await button!.click()
    expect(await button!.evaluate((b) => b.getAttribute('aria-pressed'))).toBe('false')
    const ended = await until('the call ended', call, (c) => c.status === 'completed', 20_000)
    expect(ended.transcript.some((l: any) => l.speaker === 'customer' && l.text === QUESTION)).toBe(true)
    const list = await s.api('GET', '/calls', { key: dev.key })
    expect(list.body.items.find((c: any) => c.id === callId)).toBeTruthy()
    const totals = await s.api('GET', '/calls/summary?days=1', { key: dev.key })
    expect(totals.body.surfaces.web).toBe(1)
    // Recorded and analysed like a phone call: the WAV is ready once the stream has ended, then the summary.
    await until('the recording', call, (c) => c.recording?.ready === true, 20_000)
    const analysed = await until('the analysis', call, (c) => c.analysedAt !== null, 20_000)
    expect(analysed.summary).toBeTruthy()
    expect((await stats(page)).transport).toBe('websocket')
    await page.screenshot({ path: join(artifactDir('web-widget'), 'call-1280.png') })
    await page.close()
  }, 150_000)

  test('over WebRTC (werift, Opus): the page prefers it; the question is heard and the answer played', async () => {
    const before = fake.requests.length
    const page = await browser.newPage()
    await page.goto(`${s.url}/w/${webKey}`)
    const button = await page.waitForSelector('.bar button.call:not([hidden])', { timeout: 20_000 })
    await button!.click()
    await until(
      'connected over WebRTC',
      () => stats(page),
      (x) => x.state === 'live',
      30_000,
    )
    expect((await stats(page)).transport).toBe('webrtc')
    // Opus packets arrive and the browser plays them out; the microphone's packets go up.
    await until(
      'the greeting played',
      () => stats(page),
      (x) => x.samplesPlayed > 16_000 && x.framesSent > 50,
      30_000,
    )
    const heard = await until(
      'a transcription',
      async () => fake.requests.slice(before).filter((r) => r.path === '/v1/audio/transcriptions'),
      (r) => r.length > 0,
      30_000,
    )
    expect(heard[0]!.body.bytes).toBeGreaterThan(16_000)
    const callId = (await stats(page)).callId as string
    const call = () => s.api('GET', `/calls/${callId}`, { key: dev.key }).then((r) => r.body)
    await until('the answer in the transcript', call, (c) => c.transcript.some((l: any) => l.speaker === 'agent' && /open from 7 am/.test(l.text)), 40_000)
    expect((await stats(page)).framesReceived).toBeGreaterThan(50)
    // The question, asked again over the answer, interrupts it: the server's `clear` drops the queued
    // Opus and the stored reply is cut to what had gone out (the pipeline marks it interrupted).
    const row = await s.server.services.of(callsFeature).calls.newest(callId)
    const messages = await s.server.services.store.collection<any>(messagesSpec)
    await until(
      'an interrupted reply',
      () => messages.find({ conversationId: row!.conversationId, interrupted: true }),
      (m) => m.length > 0,
      40_000,
    )
    await button!.click()
    const ended = await until('the call ended', call, (c) => c.status === 'completed', 20_000)
    expect(ended.transcript.some((l: any) => l.speaker === 'customer' && l.text === QUESTION)).toBe(true)
    await page.close()
  }, 150_000)
})
