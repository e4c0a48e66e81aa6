/**
 * Calls on TELEPHONY_PROVIDER=telnyx, end to end: the real server places calls through a local
 * fake of Telnyx's Call Control API (TELNYX_API_BASE_URL), hears its Ed25519-signed webhooks on
 * its public URL (a forged one refused), starts the call's media stream once it is answered, and
 * talks over Telnyx's media-streaming socket: the agent's audio goes out in Telnyx's frames, the
 * caller's words (espeak-ng's voice, transcribed by Deepgram's adapter against its fake) get an
 * answer, keys reach the transcript, and a transfer and a hang-up go to Telnyx as call commands.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { decodeLegState } from '../../src/providers/telephony/telnyx-events'
import { encodeMulaw } from '../../src/voice/codecs'
import { type DeepgramFake, startDeepgramFake } from '../fakes/deepgram'
import type { TelnyxFake, TelnyxStream } from '../fakes/telnyx'
import type { TestServer } from '../support/server'
import { systemBinary } from '../support/system-binary'
import { startTelnyxServer, type TelnyxServer } from '../support/telnyx-server'
import { callerSpeech, FRAME_SAMPLES } from '../support/twilio-line'
import { until } from '../support/until'

const ESPEAK = systemBinary('espeak-ng', 'apt-get install espeak-ng', 'ESPEAK_NG')
const DEEPGRAM_KEY = 'dg-telnyx-key-0123456789'
const OURS = '+14155558800'
const BILLING = '+14155558877'
let deepgram: DeepgramFake
let telnyx: TelnyxServer
let fake: TelnyxFake
let s: TestServer
let key: string

const call = (id: string) => s.api('GET', `/calls/${id}`, { key })

beforeAll(async () => {
  deepgram = startDeepgramFake(DEEPGRAM_KEY)
  telnyx = await startTelnyxServer({ STT_PROVIDER: 'deepgram', DEEPGRAM_API_KEY: DEEPGRAM_KEY, DEEPGRAM_BASE_URL: deepgram.url.replace(/^http/, 'ws') })
  ;({ fake, s } = telnyx)
  const dev = await s.developer({ plan: 'pro' })
  key = dev.key
  const agent = await s.agent(key, {
    name: 'Desk',
    model: 'local',
    instructions: 'You answer questions about the dental clinic.',
    voice: { answersCalls: true },
    transfers: [{ name: 'Billing', phoneNumber: BILLING, whenToUse: 'bills and refunds' }],
  })
  await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: OURS, source: 'rented', agent: agent.id })
  for (const phone of ['+14155558801', '+14155558802', '+14155558803']) await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })
})
afterAll(async () => {
  await telnyx?.stop()
  deepgram?.stop()
})

/** The line's inbound track every 20 ms, as Telnyx streams it: silence unless speech is queued. */
function inboundTrack(line: TelnyxStream) {
  const queue: Uint8Array[] = []
  const silence = encodeMulaw(new Int16Array(FRAME_SAMPLES))
  let seq = 2
  const tick = setInterval(() => {
    const payload = Buffer.from(queue.shift() ?? silence).toString('base64')
    seq++
    line.send({ event: 'media', sequence_number: String(seq), media: { track: 'inbound', chunk: String(seq), timestamp: String(seq * 20), payload } })
  }, 20)
  return {
    say: (pcm: Int16Array) => {
      for (let at = 0; at + FRAME_SAMPLES <= pcm.length; at += FRAME_SAMPLES) queue.push(encodeMulaw(pcm.subarray(at, at + FRAME_SAMPLES)))
    },
    stop: () => clearInterval(tick),
  }
}

test.skipIf(!ESPEAK.path)(
  "placed through Telnyx: signed webhooks connect it, the stream talks both ways in Telnyx's frames, keys are heard, a transfer goes to Telnyx",
  async () => {
    const placed = await s.api('POST', '/calls', { key, body: { to: '+14155558801', purpose: 'Hello, this is the dental clinic.' } })
    expect(placed.status).toBe(202)
    const id = placed.body.id as string
    const dialed = fake.calls.at(-1)!
    expect(dialed.dial).toMatchObject({ connection_id: fake.connectionId, to: '+14155558801', from: OURS, webhook_url: `${s.url}/telephony/telnyx/events` })
    expect(decodeLegState(dialed.dial.client_state)).toEqual({ c: id, a: 1, n: OURS })
    const ref = dialed.callControlId
    expect((await call(id)).body).toMatchObject({ status: 'ringing', callRef: ref })

    // A forged answer is refused and changes nothing; Telnyx's signed one connects the call.
    expect(await fake.webhook(ref, 'call.answered', {}, { forged: true })).toBe(403)
    expect((await call(id)).body.status).toBe('ringing')
    expect(await fake.webhook(ref, 'call.answered', { state: 'answered' })).toBe(204)
    expect((await call(id)).body.status).toBe('connected')
    const started = dialed.actions.find((a) => a.action === 'streaming_start')!
    expect(started.body).toMatchObject({ stream_track: 'inbound_track', stream_bidirectional_mode: 'rtp', stream_bidirectional_codec: 'PCMU' })
    expect(started.body.stream_url).toMatch(new RegExp(`^${s.url.replace(/^http/, 'ws')}/media/${id}/[^/]+$`))

    const line = await fake.stream(ref, { echoMarks: true })
    const inbound = inboundTrack(line)
    try {
      await until(
        'the opening is heard',
        () => call(id),
        (r) => r.body.transcript.some((l: any) => l.speaker === 'agent'),
        15_000,
      )
      // What the service sends is Telnyx's bidirectional shape: media with a payload, marks; no stream ids.
      const media = line.received.find((m) => m.event === 'media')
      expect(Object.keys(media)).toEqual(['event', 'media'])
      expect(Buffer.from(media.media.payload, 'base64').length).toBeGreaterThan(0)
      expect(line.received.find((m) => m.event === 'mark')).toMatchObject({ event: 'mark', mark: { name: expect.any(String) } })

      // The caller asks; the agent answers after it.
      const question = 'What time do you open on Saturday?'
      deepgram.utterances.push(question)
      inbound.say(callerSpeech(ESPEAK.path!, question))
      const answered = await until(
        'the question is answered',
        () => call(id),
        (r) => {
          const asked = r.body.transcript.findIndex((l: any) => l.speaker === 'customer' && l.text === question)
          return asked >= 0 && r.body.transcript.slice(asked + 1).some((l: any) => l.speaker === 'agent')
        },
        20_000,
      )
      expect(answered.body.status).toBe('connected')

      // Keys, as Telnyx's dtmf frames.
      for (const digit of ['4', '2', '#']) line.send({ event: 'dtmf', sequence_number: '0', occurred_at: new Date().toISOString(), dtmf: { digit } })
      await until(
        'the keys in the transcript',
        () => call(id),
        (r) => r.body.transcript.some((l: any) => l.speaker === 'customer' && l.text === '[keypad] 42#'),
        10_000,
      )

      // A transfer is Telnyx's transfer command; the person's leg reports on its own client_state.
      const asked = await s.api('POST', `/calls/${id}/transfer`, { key, body: { destination: 'Billing' } })
      expect(asked.status).toBe(202)
      const transfer = dialed.actions.find((a) => a.action === 'transfer')!
      expect(transfer.body).toMatchObject({ to: BILLING, from: OURS, timeout_secs: 30 })
      const leg = transfer.body.target_leg_client_state as string
      expect(decodeLegState(leg)).toEqual({ c: id, a: 1, l: 'transfer', n: OURS })
      line.send({ event: 'stop', sequence_number: '99', stop: { call_control_id: ref } })
      expect(await fake.webhook('v3:billing-leg', 'call.answered', {}, { clientState: leg, url: `${s.url}/telephony/telnyx/events` })).toBe(204)
      await until(
        'the person answered',
        () => call(id),
        (r) => r.body.transfer?.answeredAt != null,
      )
      await s.console('POST', '/clock/advance', { ms: 42_000 })
      expect(await fake.webhook('v3:billing-leg', 'call.hangup', { hangup_cause: 'normal_clearing' }, { clientState: leg, url: `${s.url}/telephony/telnyx/events` })).toBe(204)
      expect(await fake.webhook(ref, 'call.hangup', { hangup_cause: 'normal_clearing', hangup_source: 'callee' })).toBe(204)
      const done = await until(
        'completed',
        () => call(id),
        (r) => r.body.status === 'completed' && r.body.analysedAt !== null,
        10_000,
      )
      expect(done.body).toMatchObject({ hangup: 'answered', transfer: { to: 'Billing', outcome: 'answered', error: null } })
    } finally {
      inbound.stop()
      line.socket.close()
    }
  },
  60_000,
)

test("Telnyx's refusal is a 502 naming its reason; DELETE of a live call is Telnyx's hangup command", async () => {
  fake.refuse.add('+14155558802')
  const refused = await s.api('POST', '/calls', { key, body: { to: '+14155558802', purpose: 'Hi' } })
  expect(refused.status).toBe(502)
  expect(refused.body.error).toContain('Invalid value for to')
  expect(refused.body.error).toContain('(error 10015)')
  expect((await call(refused.body.id)).body).toMatchObject({ status: 'failed', hangup: 'failed' })

  const live = (await s.api('POST', '/calls', { key, body: { to: '+14155558803', purpose: 'Hi' } })).body.id
  const ref = fake.calls.at(-1)!.callControlId
  expect(await fake.webhook(ref, 'call.answered')).toBe(204)
  expect((await call(live)).body.status).toBe('connected')
  expect((await s.api('DELETE', `/calls/${live}`, { key })).status).toBe(202)
  await until(
    'hung up at Telnyx',
    async () => fake.calls.find((c) => c.callControlId === ref)!.actions.map((a) => a.action),
    (actions) => actions.includes('hangup'),
  )
})

test('a webhook body is bounded while it is read: past the limit it is refused before any signature work', async () => {
  const res = await fetch(`${s.url}/telephony/telnyx/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'telnyx-signature-ed25519': 'x', 'telnyx-timestamp': '1' },
    body: JSON.stringify({ data: { padding: 'x'.repeat(70 * 1024) } }),
  })
  expect(res.status).toBe(413)
})

test('voicemail drop: detect_beep; silent until the greeting has ended; the message, then the hangup command', async () => {
  const dev = await s.developer({ plan: 'pro' })
  const agent = (await s.agent(dev.key, { name: 'Recall', voice: { answersCalls: true, detectMachines: true, voicemailMessage: 'Hi, Sunrise Dental here. Please call us back.' } })).id
  await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155558810', source: 'rented', agent })
  await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155558811' })
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155558811', purpose: 'Hello, calling about your cleaning.', agent } })
  expect(placed.status).toBe(202)
  const id = placed.body.id
  const dialed = fake.calls.at(-1)!
  expect(dialed.dial.answering_machine_detection).toBe('detect_beep')
  const ref = dialed.callControlId
  expect(await fake.webhook(ref, 'call.answered')).toBe(204)
  const line = await fake.stream(ref, { echoMarks: true })
  expect(await fake.webhook(ref, 'call.machine.detection.ended', { result: 'machine' })).toBe(204)
  expect(await fake.webhook(ref, 'call.machine.greeting.ended', { result: 'beep_detected' }, { forged: true })).toBe(403)
  expect(await fake.webhook(ref, 'call.machine.greeting.ended', { result: 'beep_detected' })).toBe(204)
  const done = await until(
    'ended voicemail',
    () => s.api('GET', `/calls/${id}`, { key: dev.key }),
    (r) => r.body.status === 'completed',
    20_000,
  )
  expect(done.body.hangup).toBe('voicemail')
  expect(done.body.transcript.map((l: any) => [l.speaker, l.text])).toEqual([['agent', 'Hi, Sunrise Dental here. Please call us back.']])
  expect(line.received.some((m) => m.event === 'media')).toBe(true)
  await until(
    'hung up at Telnyx',
    async () => dialed.actions.map((a) => a.action),
    (actions) => actions.includes('hangup'),
  )
  line.socket.close()
}, 40_000)

test('a machine on a call that detects machines (no message): missed as voicemail, hung up, never streamed', async () => {
  const dev = await s.developer({ plan: 'pro' })
  const agent = (await s.agent(dev.key, { name: 'Caller', voice: { answersCalls: true, detectMachines: true } })).id
  await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155558820', source: 'rented', agent })
  await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155558821' })
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155558821', purpose: 'Hello.', agent } })).body.id
  const dialed = fake.calls.at(-1)!
  expect(dialed.dial.answering_machine_detection).toBe('detect')
  expect(await fake.webhook(dialed.callControlId, 'call.answered')).toBe(204)
  expect((await s.api('GET', `/calls/${id}`, { key: dev.key })).body.status).toBe('ringing')
  expect(await fake.webhook(dialed.callControlId, 'call.machine.detection.ended', { result: 'machine' })).toBe(204)
  expect((await s.api('GET', `/calls/${id}`, { key: dev.key })).body).toMatchObject({ status: 'missed', hangup: 'voicemail' })
  expect(dialed.actions.map((a) => a.action)).toEqual(['hangup'])
})

test('a number brought with its own Telnyx account: its calls go out, are verified and end on that account; the account is never shown', async () => {
  const own = fake.addAccount()
  const dev = await s.developer({ plan: 'pro' })
  const agent = (await s.agent(dev.key, { name: 'Own line', voice: { answersCalls: true } })).id
  // Checked with Telnyx first: a wrong key is 400 with Telnyx's reason, Telnyx out of reach 502; nothing is kept.
  const wrong = await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155558830', source: 'brought', agent, carrierAccount: { ...own, apiKey: 'KEY-wrong' } })
  expect(wrong.status).toBe(400)
  expect(wrong.body.error).toBe('carrierAccount: Telnyx refused the account: Authentication failed: The API key provided is not valid. (error 10009); the account was not saved')
  fake.rateLimited = 1
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155558830', source: 'brought', agent, carrierAccount: own })).status).toBe(502)
  expect((await s.api('GET', '/phone-numbers', { key: dev.key })).body.items).toEqual([])
  const added = await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155558830', source: 'brought', agent, carrierAccount: own })
  expect(added.status).toBe(201)
  expect(added.body.carrierCredentials).toBe(true)
  expect(JSON.stringify(added.body)).not.toContain(own.apiKey)
  await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155558831' })
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155558831', purpose: 'Hello.', agent } })).body.id
  const dialed = fake.calls.at(-1)!
  expect(dialed.apiKey).toBe(own.apiKey)
  expect(dialed.dial.connection_id).toBe(own.connectionId)
  // Signed by the instance's account rather than the number's own: refused.
  expect(await fake.webhook(dialed.callControlId, 'call.answered', {}, { signedBy: fake.apiKey })).toBe(403)
  expect(await fake.webhook(dialed.callControlId, 'call.answered')).toBe(204)
  expect((await s.api('GET', `/calls/${id}`, { key: dev.key })).body.status).toBe('connected')
  expect(dialed.actions.map((a) => a.action)).toEqual(['streaming_start'])
  expect((await s.api('DELETE', `/calls/${id}`, { key: dev.key })).status).toBe(202)
  await until(
    "hung up on the number's account",
    async () => dialed.actions.map((a) => a.action),
    (actions) => actions.includes('hangup'),
  )

  // A brought number may get its account later; the console refuses an empty one.
  await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155558832', source: 'brought', carrierCredentials: false })
  const empty = await s.console('PATCH', `/workspaces/${dev.id}/phone-numbers/%2B14155558832`, { carrierAccount: { apiKey: ' ' } })
  expect(empty.status).toBe(400)
  const patched = await s.console('PATCH', `/workspaces/${dev.id}/phone-numbers/%2B14155558832`, { carrierAccount: own })
  expect(patched.status).toBe(200)
  expect(patched.body.carrierCredentials).toBe(true)
})

test('an incoming call is answered with its stream and the agent speaks; one to a number nobody holds is rejected busy', async () => {
  const url = `${s.url}/telephony/telnyx/events`
  const ref = 'v3:incoming-to-desk'
  const initiated = { direction: 'incoming', from: '+14155558890', to: OURS, state: 'parked', client_state: null }
  expect(await fake.webhook(ref, 'call.initiated', initiated, { url, forged: true })).toBe(403)
  expect(fake.calls.find((c) => c.callControlId === ref)).toBeUndefined()
  expect(await fake.webhook(ref, 'call.initiated', initiated, { url })).toBe(204)
  const answered = fake.calls.find((c) => c.callControlId === ref)!
  expect(answered.actions.map((a) => a.action)).toEqual(['answer'])
  expect(answered.actions[0]!.body).toMatchObject({ stream_track: 'inbound_track', stream_bidirectional_mode: 'rtp', stream_bidirectional_codec: 'PCMU', webhook_url: url })
  const id = decodeLegState(answered.actions[0]!.body.client_state)!.c
  expect(id).toMatch(/^in_/)
  // Inbound calls are not listed on the API (docs/spec.md): the agent's opening is heard on the line.
  const line = await fake.stream(ref, { echoMarks: true })
  try {
    await until(
      'the agent speaks on the line',
      async () => line.received.filter((m) => m.event === 'media').length,
      (n) => n > 0,
      15_000,
    )
  } finally {
    line.socket.close()
  }
  expect(await fake.webhook('v3:incoming-to-nobody', 'call.initiated', { ...initiated, to: '+14155558899' }, { url })).toBe(204)
  expect(fake.calls.find((c) => c.callControlId === 'v3:incoming-to-nobody')!.actions).toEqual([{ action: 'reject', body: { cause: 'USER_BUSY' } }])
}, 30_000)

test("a cold transfer's seconds are its leg's, from the leg's hang-up (start_time to occurred_at), though its answer never came", async () => {
  const id = (await s.api('POST', '/calls', { key, body: { to: '+14155558801', purpose: 'Hello again.' } })).body.id
  const dialed = fake.calls.at(-1)!
  expect(await fake.webhook(dialed.callControlId, 'call.answered')).toBe(204)
  expect((await s.api('POST', `/calls/${id}/transfer`, { key, body: { destination: 'Billing' } })).status).toBe(202)
  const leg = dialed.actions.find((a) => a.action === 'transfer')!.body.target_leg_client_state as string
  const url = `${s.url}/telephony/telnyx/events`
  // Telnyx's call.hangup has no duration: the leg started 42 s before this event occurred.
  const startTime = new Date(Date.now() - 42_000).toISOString()
  expect(await fake.webhook('v3:billing-leg-2', 'call.hangup', { hangup_cause: 'normal_clearing', start_time: startTime }, { clientState: leg, url })).toBe(204)
  expect(await fake.webhook(dialed.callControlId, 'call.hangup', { hangup_cause: 'normal_clearing' })).toBe(204)
  const done = await until(
    'completed',
    () => call(id),
    (r) => r.body.status === 'completed',
    10_000,
  )
  expect(done.body.transfer).toMatchObject({ to: 'Billing', outcome: 'answered', seconds: 42 })
})
