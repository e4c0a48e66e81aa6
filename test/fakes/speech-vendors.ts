/**
 * Local fakes of the HTTP speech APIs, in their real wire formats:
 * - ElevenLabs `POST /v1/text-to-speech/{voice}/stream?output_format=pcm_16000` (`xi-api-key`;
 *   raw PCM streamed in chunks; errors `{ detail: { status, message } }`) and `GET /v1/voices`;
 * - OpenAI `POST /v1/audio/speech` (`response_format: pcm`, 24 kHz) and
 *   `POST /v1/audio/transcriptions` (multipart; `{ text }`), errors `{ error: { message, type, code } }`.
 * The audio is a tone ~60 ms per character, sent in several chunks with an odd-sized boundary.
 */
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

export function startSpeechFake(key: string): SpeechFake {
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
        return streamed(tone(body.text, 16_000))
      }
      if (u.pathname === '/v1/voices') {
        if (headers['xi-api-key'] !== key) return Response.json({ detail: { status: 'invalid_api_key', message: 'Invalid API key' } }, { status: 401 })
        return Response.json({ voices: [{ voice_id: '9BWtsMINqrJLrRacOk9x', name: 'Aria', labels: { accent: 'american' } }] })
      }
      const openaiDenied = () => Response.json({ error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } }, { status: 401 })
      if (u.pathname === '/v1/audio/speech') {
        if (headers.authorization !== `Bearer ${key}`) return openaiDenied()
        const body = await req.json()
        fake.requests.push({ path: u.pathname, headers, body })
        return streamed(tone(body.input, 24_000))
      }
      if (u.pathname === '/v1/audio/transcriptions') {
        if (headers.authorization !== `Bearer ${key}`) return openaiDenied()
        const form = await req.formData()
        const file = form.get('file') as File
        const bytes = new Uint8Array(await file.arrayBuffer())
        fake.requests.push({ path: u.pathname, headers, body: { model: form.get('model'), language: form.get('language'), response_format: form.get('response_format'), riff: new TextDecoder().decode(bytes.subarray(0, 4)), bytes: bytes.length, name: file.name } })
        return Response.json({ text: fake.transcript })
      }
      return new Response('not found', { status: 404 })
    },
  })
  fake.url = `http://127.0.0.1:${server.port}`
  return fake
}
