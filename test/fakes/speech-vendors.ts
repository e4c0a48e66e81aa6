/**
 * Local fakes of the HTTP speech APIs, in their real wire formats:
 * - ElevenLabs `POST /v1/text-to-speech/{voice}/stream?output_format=pcm_16000` (`xi-api-key`;
 *   raw PCM streamed in chunks; errors `{ detail: { status, message } }`) and `GET /v1/voices`;
 * - OpenAI `POST /v1/audio/speech` (`response_format: pcm`, 24 kHz) and
 *   `POST /v1/audio/transcriptions` (multipart; `{ text }`), errors `{ error: { message, type, code } }`.
 * The audio is a tone ~60 ms per character, sent in several chunks with an odd-sized boundary, or,
 * for ElevenLabs with `SpeechFakeOptions`, after a first-audio delay in paced chunks.
 */
export interface SpeechFakeOptions {
  /** Ms before ElevenLabs' first audio chunk (time to first byte); 0 by default. Realistic: `REALISTIC.elevenlabsFirstAudioMs`. */
  firstAudioMs?: number
  /** ElevenLabs streams chunks of this much audio (ms) when set; unset keeps the odd-sized three. */
  audioChunkMs?: number
  /** How many times faster than real time those chunks come (1 by default). Realistic: `REALISTIC.elevenlabsSpeedup`. */
  speedup?: number
}

export interface SpeechFake {
  url: string
  requests: { path: string; headers: Record<string, string>; body: any }[]
  /** What transcriptions return. */
  transcript: string
  stop(): void
}

function tone(text: string, rate: number): Uint8Array {
  const samples = Math.round((text.length * 60 * rate) / 1000)
  const out = new Uint8Array(samples * 2)
  const view = new DataView(out.buffer)
  for (let i = 0; i < samples; i++) view.setInt16(i * 2, Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), true)
  return out
}

function streamed(bytes: Uint8Array): Response {
  const cuts = [0, 1001, Math.floor(bytes.length / 2) + 1, bytes.length]
  let i = 0
  return new Response(
    new ReadableStream({
      async pull(controller) {
        if (i >= cuts.length - 1) return controller.close()
        controller.enqueue(bytes.slice(cuts[i], cuts[i + 1]))
        i++
        await Bun.sleep(15)
      },
    }),
    { headers: { 'content-type': 'application/octet-stream' } },
  )
}

/** PCM after `firstAudioMs`, then in `audioChunkMs` chunks `speedup` times faster than they play. */
function paced(bytes: Uint8Array, rate: number, o: SpeechFakeOptions): Response {
  const size = o.audioChunkMs ? Math.max(2, Math.round((rate * o.audioChunkMs) / 1000) * 2) : 0
  const cuts = size ? Array.from({ length: Math.ceil(bytes.length / size) + 1 }, (_, i) => Math.min(i * size, bytes.length)) : [0, 1001, Math.floor(bytes.length / 2) + 1, bytes.length]
  const gapMs = size ? o.audioChunkMs! / (o.speedup ?? 1) : 15
  let i = 0
  return new Response(
    new ReadableStream({
      async pull(controller) {
        if (i >= cuts.length - 1) return controller.close()
        await Bun.sleep(i === 0 ? (o.firstAudioMs ?? 0) : gapMs)
        controller.enqueue(bytes.slice(cuts[i], cuts[i + 1]))
        i++
      },
    }),
    { headers: { 'content-type': 'application/octet-stream' } },
  )
}

/** A RIFF/WAVE file around 16-bit mono PCM, as OpenAI's `response_format: wav` answers. */
function wav(pcm: Uint8Array, rate: number): Uint8Array {
  const out = new Uint8Array(44 + pcm.length)
  const v = new DataView(out.buffer)
  const ascii = (at: number, text: string) => {
    for (const [i, c] of [...text].entries()) v.setUint8(at + i, c.charCodeAt(0))
  }
  ascii(0, 'RIFF')
  v.setUint32(4, 36 + pcm.length, true)
  ascii(8, 'WAVE')
  ascii(12, 'fmt ')
  v.setUint32(16, 16, true)
  v.setUint16(20, 1, true)
  v.setUint16(22, 1, true)
  v.setUint32(24, rate, true)
  v.setUint32(28, rate * 2, true)
  v.setUint16(32, 2, true)
  v.setUint16(34, 16, true)
  ascii(36, 'data')
  v.setUint32(40, pcm.length, true)
  out.set(pcm, 44)
  return out
}

/** Bytes that start like an MPEG audio stream (an ID3 tag, then frame sync words), sized by the text. */
function mp3Frames(text: string): Uint8Array {
  const out = new Uint8Array(10 + 417 * Math.max(1, Math.ceil(text.length / 10)))
  out.set([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0])
  for (let at = 10; at + 1 < out.length; at += 417) out.set([0xff, 0xfb], at)
  return out
}

export function startSpeechFake(key: string, options: SpeechFakeOptions = {}): SpeechFake {
  const fake: SpeechFake = { url: '', requests: [], transcript: 'hello there', stop: () => server.stop(true) }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const u = new URL(req.url)
      const headers = Object.fromEntries(req.headers)
      if (u.pathname.startsWith('/v1/text-to-speech/') && u.pathname.endsWith('/stream')) {
        if (headers['xi-api-key'] !== key) return Response.json({ detail: { status: 'invalid_api_key', message: 'Invalid API key' } }, { status: 401 })
        const body = await req.json()
        fake.requests.push({ path: `${u.pathname}${u.search}`, headers, body })
        if (u.searchParams.get('output_format') !== 'pcm_16000') return Response.json({ detail: { status: 'bad_format', message: 'unexpected output_format' } }, { status: 422 })
        const pcm = tone(body.text, 16_000)
        return options.firstAudioMs || options.audioChunkMs ? paced(pcm, 16_000, options) : streamed(pcm)
      }
      if (u.pathname === '/v1/voices') {
        if (headers['xi-api-key'] !== key) return Response.json({ detail: { status: 'invalid_api_key', message: 'Invalid API key' } }, { status: 401 })
        return Response.json({
          voices: [
            {
              voice_id: '9BWtsMINqrJLrRacOk9x',
              name: 'Aria',
              labels: { accent: 'american' },
              preview_url: 'https://storage.googleapis.com/eleven-public-prod/premade/voices/9BWtsMINqrJLrRacOk9x/preview.mp3',
            },
            { voice_id: 'JBFqnCBsd6RMkjVDRZzb', name: 'George', labels: { accent: 'british' }, preview_url: null },
          ],
        })
      }
      // GET /v1/models (https://elevenlabs.io/docs/api-reference/models/list): an array, not an object.
      if (req.method === 'GET' && u.pathname === '/v1/models') {
        if (headers['xi-api-key'] !== key) return Response.json({ detail: { status: 'invalid_api_key', message: 'Invalid API key' } }, { status: 401 })
        return Response.json([
          { model_id: 'eleven_flash_v2_5', name: 'Eleven Flash v2.5', can_do_text_to_speech: true },
          { model_id: 'eleven_multilingual_v2', name: 'Eleven Multilingual v2', can_do_text_to_speech: true },
          { model_id: 'eleven_english_sts_v2', name: 'Eleven English v2 (speech to speech)', can_do_text_to_speech: false },
        ])
      }
      // Non-streaming text-to-speech (the voice preview): MP3 by default.
      const whole = /^\/v1\/text-to-speech\/([^/]+)$/.exec(u.pathname)
      if (req.method === 'POST' && whole) {
        if (headers['xi-api-key'] !== key) return Response.json({ detail: { status: 'invalid_api_key', message: 'Invalid API key' } }, { status: 401 })
        const body = await req.json()
        fake.requests.push({ path: `${u.pathname}${u.search}`, headers, body })
        return new Response(mp3Frames(body.text).buffer as ArrayBuffer, { headers: { 'content-type': 'audio/mpeg' } })
      }
      const openaiDenied = () => Response.json({ error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } }, { status: 401 })
      if (u.pathname === '/v1/audio/speech') {
        if (headers.authorization !== `Bearer ${key}`) return openaiDenied()
        const body = await req.json()
        fake.requests.push({ path: u.pathname, headers, body })
        if (body.response_format === 'wav') return new Response(wav(tone(body.input, 24_000), 24_000).buffer as ArrayBuffer, { headers: { 'content-type': 'audio/wav' } })
        return streamed(tone(body.input, 24_000))
      }
      if (u.pathname === '/v1/audio/transcriptions') {
        if (headers.authorization !== `Bearer ${key}`) return openaiDenied()
        const form = await req.formData()
        const file = form.get('file') as File
        const bytes = new Uint8Array(await file.arrayBuffer())
        fake.requests.push({
          path: u.pathname,
          headers,
          body: {
            model: form.get('model'),
            language: form.get('language'),
            response_format: form.get('response_format'),
            riff: new TextDecoder().decode(bytes.subarray(0, 4)),
            bytes: bytes.length,
            name: file.name,
          },
        })
        return Response.json({ text: fake.transcript })
      }
      return new Response('not found', { status: 404 })
    },
  })
  fake.url = `http://127.0.0.1:${server.port}`
  return fake
}
