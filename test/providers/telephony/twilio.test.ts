/**
 * The Twilio adapter against a local fake of Twilio's REST API and status callbacks: the request
 * checked exactly, refusals, hang-ups, signed callbacks mapped to the chart's events, a bad
 * signature refused; and the signature algorithm against twilio-node's published test vectors.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PlacementRefused, type TelephonyEvent } from '../../../src/providers/telephony/port'
import { statusEvent, streamTwiml, TwilioTelephony } from '../../../src/providers/telephony/twilio'
import { twilioSignature, verifyTwilioSignature } from '../../../src/providers/telephony/twilio-signature'
import { startTwilioFake, type TwilioFake } from '../../fakes/twilio'

describe('X-Twilio-Signature', () => {
  // Test vectors of Twilio's own Node library (spec/validation.spec.js).
  const token = '12345'
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2'
  const params = { CallSid: 'CA1234567890ABCDE', Caller: '+14158675309', Digits: '1234', From: '+14158675309', To: '+18005551212' }

  test('the published signatures', () => {
    expect(twilioSignature(token, url, params)).toBe('RSOYDt4T1cUTdK1PDd93/VVr8B8=')
    expect(twilioSignature(token, url, { 'MessagingBinding.Address': ['+1325xxxxxxx', '+1415xxxxxxx'] })).toBe('83O6e2vORAoJHUNzJjDWN1jz+BA=')
    expect(twilioSignature(token, url, { Sid: 'CA123', SidAccount: 'AC123', Digits: ['5678', '1234', '1234'] })).toBe('IK+Dwps556ElfBT0I3Rgjkr1wJU=')
  })

  test('verification: right, wrong, missing; with or without the standard port', () => {
    expect(verifyTwilioSignature(token, url, params, 'RSOYDt4T1cUTdK1PDd93/VVr8B8=')).toBe(true)
    expect(verifyTwilioSignature(token, url, params, 'WRONG_SIGNATURE')).toBe(false)
    expect(verifyTwilioSignature(token, url, params, null)).toBe(false)
    expect(verifyTwilioSignature(token, url, { ...params, Digits: '9' }, 'RSOYDt4T1cUTdK1PDd93/VVr8B8=')).toBe(false)
    expect(verifyTwilioSignature(token, url, params, 'kvajT1Ptam85bY51eRf/AJRuM3w=')).toBe(true)
    expect(verifyTwilioSignature(token, url.replace('.com', '.com:443'), params, 'RSOYDt4T1cUTdK1PDd93/VVr8B8=')).toBe(true)
  })
})

test("a media stream's upgrade: the adapter checks Twilio's signature over the socket's URL, with no parameters", () => {
  const twilio = new TwilioTelephony({ accountSid: 'AC1', authToken: 'secret', apiBaseUrl: 'http://127.0.0.1:1', publicBaseUrl: 'http://127.0.0.1:1' })
  const url = 'wss://calls.example.com/media/out_1'
  const signed = new Headers({ 'x-twilio-signature': twilioSignature('secret', url, {}) })
  expect(twilio.mediaUpgradeRefusal(url, signed)).toBeNull()
  expect(twilio.mediaUpgradeRefusal(`${url}x`, signed)).toBe('X-Twilio-Signature does not verify')
  expect(twilio.mediaUpgradeRefusal(url, new Headers())).toBe('X-Twilio-Signature does not verify')
})

describe('status mapping', () => {
  const ref = { callId: 'out_1', attempt: 1 }
  const at = 1_000
  test('answered, machines, endings, refusals; ringing changes nothing', () => {
    expect(statusEvent({ CallSid: 'CA1', CallStatus: 'in-progress', AnsweredBy: 'human' }, ref, at)).toMatchObject({ type: 'answered', callRef: 'CA1' })
    expect(statusEvent({ CallSid: 'CA1', CallStatus: 'in-progress' }, ref, at)).toMatchObject({ type: 'answered' })
    for (const machine of ['machine_start', 'machine_end_beep', 'machine_end_silence', 'fax']) {
      expect(statusEvent({ CallSid: 'CA1', CallStatus: 'in-progress', AnsweredBy: machine }, ref, at)).toMatchObject({ type: 'unanswered', hangup: 'voicemail' })
    }
    expect(statusEvent({ CallSid: 'CA1', CallStatus: 'completed', CallDuration: '42' }, ref, at)).toMatchObject({ type: 'ended', hangup: 'answered' })
    expect(statusEvent({ CallSid: 'CA1', CallStatus: 'busy' }, ref, at)).toMatchObject({ type: 'unanswered', hangup: 'busy' })
    expect(statusEvent({ CallSid: 'CA1', CallStatus: 'no-answer' }, ref, at)).toMatchObject({ type: 'unanswered', hangup: 'no_answer' })
    expect(statusEvent({ CallSid: 'CA1', CallStatus: 'failed' }, ref, at)).toMatchObject({ type: 'unanswered', hangup: 'unreachable' })
    for (const quiet of ['queued', 'initiated', 'ringing', 'canceled']) expect(statusEvent({ CallSid: 'CA1', CallStatus: quiet }, ref, at)).toBeNull()
  })

  test('TwiML streams to the bridge, the token as a parameter (a Stream URL takes no query string)', () => {
    expect(streamTwiml('https://api.example.com/', 'out_1', 't&k')).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://api.example.com/media/out_1"><Parameter name="token" value="t&amp;k"/></Stream></Connect></Response>',
    )
  })
})

describe('the adapter against the fake', () => {
  let fake: TwilioFake
  let ours: ReturnType<typeof Bun.serve>
  let twilio: TwilioTelephony
  const heard: TelephonyEvent[] = []

  beforeAll(() => {
    fake = startTwilioFake()
    // Our public address: the status callbacks come here and go to the adapter as the route would.
    ours = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        const ok = await twilio.statusCallback(req.url, Object.fromEntries(new URLSearchParams(await req.text())), req.headers.get('x-twilio-signature'), 5_000)
        return new Response(null, { status: ok ? 204 : 403 })
      },
    })
    twilio = new TwilioTelephony({ accountSid: fake.accountSid, authToken: fake.authToken, apiBaseUrl: fake.url, publicBaseUrl: `http://127.0.0.1:${ours.port}`, mediaToken: () => 'tok' })
    twilio.onEvent((e) => void heard.push(e))
  })
  afterAll(async () => {
    await fake.stop()
    ours.stop(true)
  })

  test('place: one authenticated form POST to Calls.json with TwiML, status callbacks and AMD', async () => {
    const placed = await twilio.place({ callId: 'out_7', attempt: 2, to: '+14155550101', from: '+14155550999', detectMachines: true })
    expect(placed.callRef).toMatch(/^CA[0-9a-f]{32}$/)
    const call = fake.calls.at(-1)!
    expect(fake.requests.at(-1)).toMatchObject({ method: 'POST', path: `/2010-04-01/Accounts/${fake.accountSid}/Calls.json`, authorized: true })
    expect(call.form.get('To')).toBe('+14155550101')
    expect(call.form.get('From')).toBe('+14155550999')
    expect(call.form.get('Twiml')).toContain(`<Stream url="ws://127.0.0.1:${ours.port}/media/out_7"><Parameter name="token" value="tok"/>`)
    expect(call.form.get('StatusCallback')).toBe(`http://127.0.0.1:${ours.port}/telephony/twilio/status?call=out_7&attempt=2`)
    expect(call.form.get('StatusCallbackMethod')).toBe('POST')
    expect(call.form.getAll('StatusCallbackEvent')).toEqual(['initiated', 'ringing', 'answered', 'completed'])
    expect(call.form.get('MachineDetection')).toBe('Enable')
  })

  test("a refusal is PlacementRefused with Twilio's message, never the token", async () => {
    fake.refuse.add('+14155550000')
    const err = await twilio.place({ callId: 'out_8', attempt: 1, to: '+14155550000', from: '+14155550999', detectMachines: false }).catch((e) => e)
    expect(err).toBeInstanceOf(PlacementRefused)
    expect(err.message).toContain('is not a valid phone number')
    expect(err.message).toContain('21211')
    expect(err.message).not.toContain(fake.authToken)
    const wrong = new TwilioTelephony({ accountSid: fake.accountSid, authToken: 'wrong', apiBaseUrl: fake.url, publicBaseUrl: 'http://127.0.0.1:1' })
    expect(await wrong.place({ callId: 'out_9', attempt: 1, to: '+14155550101', from: '+14155550999', detectMachines: false }).catch((e) => e.message)).toContain('Authenticate')
  })

  test('signed callbacks become the try’s events; a bad signature is refused and changes nothing', async () => {
    const { callRef } = await twilio.place({ callId: 'out_10', attempt: 1, to: '+14155550102', from: '+14155550999', detectMachines: false })
    heard.length = 0
    expect(await fake.callback(callRef, { CallStatus: 'ringing' })).toBe(204)
    expect(await fake.callback(callRef, { CallStatus: 'in-progress' })).toBe(204)
    expect(await fake.callback(callRef, { CallStatus: 'completed', CallDuration: '30' }, { badSignature: true })).toBe(403)
    expect(await fake.callback(callRef, { CallStatus: 'completed', CallDuration: '30' })).toBe(204)
    expect(heard.map((e) => [e.callId, e.attempt, e.type, e.callRef])).toEqual([
      ['out_10', 1, 'answered', callRef],
      ['out_10', 1, 'ended', callRef],
    ])
  })

  test('a machine that answers is hung up at Twilio and reported as voicemail', async () => {
    const { callRef } = await twilio.place({ callId: 'out_11', attempt: 1, to: '+14155550103', from: '+14155550999', detectMachines: true })
    heard.length = 0
    expect(await fake.callback(callRef, { CallStatus: 'in-progress', AnsweredBy: 'machine_start' })).toBe(204)
    expect(heard).toMatchObject([{ type: 'unanswered', hangup: 'voicemail' }])
    expect(fake.calls.find((c) => c.sid === callRef)!.updates).toEqual(['completed'])
  })

  test('hang up: completed for a live call, canceled while ringing', async () => {
    const live = await twilio.place({ callId: 'out_12', attempt: 1, to: '+14155550104', from: '+14155550999', detectMachines: false })
    const ringing = await twilio.place({ callId: 'out_13', attempt: 1, to: '+14155550105', from: '+14155550999', detectMachines: false })
    await twilio.hangUp(live.callRef, true)
    await twilio.hangUp(ringing.callRef, false)
    expect(fake.calls.find((c) => c.sid === live.callRef)!.updates).toEqual(['completed'])
    expect(fake.calls.find((c) => c.sid === ringing.callRef)!.updates).toEqual(['canceled'])
  })
})

test("Twilio's AnsweredBy as who answered: machine_* (any end) is a machine, fax a fax, anything else unknown", async () => {
  const { answeredBy } = await import('../../../src/providers/telephony/twilio')
  expect(['human', 'machine_end_beep', 'machine_end_silence', 'machine_end_other', 'machine_start', 'fax', 'unknown', undefined].map(answeredBy)).toEqual([
    'human',
    'machine',
    'machine',
    'machine',
    'machine',
    'fax',
    'unknown',
    'unknown',
  ])
})
