/**
 * A local Deepgram live-transcription server (https://developers.deepgram.com/docs/live-streaming-audio):
 * `GET /v1/listen?…` upgraded to a WebSocket with `Authorization: Token <key>` (401 otherwise),
 * binary audio in, Deepgram's JSON out: interim `Results` while audio arrives, a final one with
 * `from_finalize: true` on `{"type":"Finalize"}`, `Metadata` on `{"type":"CloseStream"}`.
 * Tests queue the transcript each utterance should produce and read back what arrived.
 */
export interface DeepgramFake {
  url: string
  /** Query of each stream opened. */
  streams: Record<string, string>[]
  audioBytes: number
  controls: string[]
  /** Text for the next utterances, in order. */
  utterances: string[]
  stop(): void
}

const results = (text: string, extra: Record<string, unknown>) =>
  JSON.stringify({ type: 'Results', channel_index: [0, 1], duration: 1, start: 0, is_final: false, speech_final: false, channel: { alternatives: [{ transcript: text, confidence: 0.98, words: [] }] }, metadata: { request_id: 'req-1' }, ...extra })

/** The speech-to-text models the fake's `GET /v1/models` lists. */
export const DEEPGRAM_STT_MODELS = ['nova-3', 'nova-2']

export function startDeepgramFake(key: string): DeepgramFake {
  const fake: DeepgramFake = { url: '', streams: [], audioBytes: 0, controls: [], utterances: [], stop: () => server.stop(true) }
  const server = Bun.serve<{ query: Record<string, string>; heard: number }, never>({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req, srv) {
      const u = new URL(req.url)
      // The management API BYOK verifies a key with (https://developers.deepgram.com/reference/management-api/projects/list,
      // …/models/list): projects need the key; the model list is public.
      if (req.method === 'GET' && u.pathname === '/v1/projects') {
        if (req.headers.get('authorization') !== `Token ${key}`) return Response.json({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' }, { status: 401 })
        return Response.json({ projects: [{ project_id: 'proj-1', name: 'Test project' }] })
      }
      if (req.method === 'GET' && u.pathname === '/v1/models') {
        return Response.json({ stt: DEEPGRAM_STT_MODELS.map((name, i) => ({ name, canonical_name: name, architecture: name.split('-')[0], languages: ['en'], version: '2024-01-01', uuid: `uuid-${i}`, batch: true, streaming: true })), tts: [] })
      }
      if (u.pathname !== '/v1/listen') return new Response('not found', { status: 404 })
      if (req.headers.get('authorization') !== `Token ${key}`) return Response.json({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' }, { status: 401 })
      const query = Object.fromEntries(u.searchParams)
      fake.streams.push(query)
      return srv.upgrade(req, { data: { query, heard: 0 } }) ? undefined : new Response('upgrade failed', { status: 400 })
    },
    websocket: {
      message(ws, message) {
        if (typeof message !== 'string') {
          fake.audioBytes += message.byteLength
          ws.data.heard += message.byteLength
          // An interim result every ~200 ms of 16 kHz audio: the first word of what is coming.
          if (ws.data.heard >= 6400 && fake.utterances[0]) {
            ws.data.heard = 0
            ws.send(results(fake.utterances[0].split(' ')[0]!, {}))
          }
          return
        }
        const control = JSON.parse(message) as { type: string }
        fake.controls.push(control.type)
        if (control.type === 'Finalize') ws.send(results(fake.utterances.shift() ?? '', { is_final: true, speech_final: true, from_finalize: true }))
        if (control.type === 'CloseStream') {
          ws.send(JSON.stringify({ type: 'Metadata', transaction_key: 'deprecated', request_id: 'req-1', duration: 1, channels: 1 }))
          ws.close(1000)
        }
      },
    },
  })
  fake.url = `ws://127.0.0.1:${server.port}`
  return fake
}
