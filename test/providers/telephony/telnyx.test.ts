/**
 * The Telnyx adapter against a local fake of Call Control v2 (test/fakes/telnyx.ts): the dial
 * checked field by field, Telnyx's refusals (a wrong key, a 422 in its `errors` shape, a rate
 * limit) failing the placement with Telnyx's reason, commands, and Ed25519-signed webhooks mapped
 * to the chart's events (a forged or stale one refused); answering-machine detection both ways.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { generateKeyPairSync, sign } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openLocalCoordination } from '../../../src/coordination/local'
import type { Coordination } from '../../../src/coordination/port'
import { PlacementRefused, type TelephonyEvent } from '../../../src/providers/telephony/port'
import { TelnyxTelephony } from '../../../src/providers/telephony/telnyx'
import { decodeLegState } from '../../../src/providers/telephony/telnyx-events'
import { TELNYX_SIGNATURE_TOLERANCE_S, telnyxPublicKey, verifyTelnyxSignature } from '../../../src/providers/telephony/telnyx-signature'
import { startTelnyxFake, type TelnyxFake } from '../../fakes/telnyx'
import { until } from '../../support/until'

describe('telnyx-signature-ed25519', () => {
  const pair = generateKeyPairSync('ed25519')
  const key = telnyxPublicKey(Buffer.from(pair.publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64'))
  const body = '{"data":{"event_type":"call.answered"}}'
  const now = 1_765_000_000_000
  const ts = String(now / 1000)
  const signed = sign(null, Buffer.from(`${ts}|${body}`), pair.privateKey).toString('base64')

  test('over "timestamp|body": right, altered, missing, stale', () => {
    expect(verifyTelnyxSignature(key, body, signed, ts, now)).toEqual({ ok: true })
    expect(verifyTelnyxSignature(key, `${body} `, signed, ts, now)).toMatchObject({ ok: false, reason: expect.stringMatching(/does not verify/) })
    expect(verifyTelnyxSignature(key, body, signed, String(Number(ts) + 1), now)).toMatchObject({ ok: false, reason: expect.stringMatching(/does not verify/) })
    expect(verifyTelnyxSignature(key, body, null, ts, now)).toMatchObject({ ok: false, reason: expect.stringMatching(/required/) })
    expect(verifyTelnyxSignature(key, body, signed, 'yesterday', now)).toMatchObject({ ok: false, reason: expect.stringMatching(/Unix time/) })
    const late = now + (TELNYX_SIGNATURE_TOLERANCE_S + 1) * 1000
    expect(verifyTelnyxSignature(key, body, signed, ts, late)).toMatchObject({ ok: false, reason: expect.stringMatching(/300 s/) })
    expect(verifyTelnyxSignature(key, body, signed, ts, now + TELNYX_SIGNATURE_TOLERANCE_S * 1000)).toEqual({ ok: true })
  })

  test('a public key that is not 32 bytes is refused at once', () => {
    expect(() => telnyxPublicKey(Buffer.alloc(31).toString('base64'))).toThrow(/32 bytes/)
  })
})

describe('the adapter against the fake', () => {
  let fake: TelnyxFake
  let ours: ReturnType<typeof Bun.serve>
  let telnyx: TelnyxTelephony
  /** The embedded coordination store, where event ids are claimed. */
  let claims: Coordination
  const claimsDir = mkdtempSync(join(tmpdir(), 'telnyx-claims-'))
  /** Numbers brought with their own Telnyx account (`carrierCredentials`). */
  const accounts = new Map<string, Record<string, string>>()
  const events: TelephonyEvent[] = []
  const incoming: { from: string; to: string }[] = []
  /** Is a warm transfer's caller still waiting (the calls feature reads the call's row)? */
  let callerWaiting = true
  const place = (to: string, o: { detectMachines?: boolean; leaveVoicemail?: boolean } = {}) =>
    telnyx.place({ callId: 'out_1', attempt: 2, to, from: '+14155550100', detectMachines: o.detectMachines ?? false, leaveVoicemail: o.leaveVoicemail })

  beforeAll(async () => {
    claims = await openLocalCoordination(join(claimsDir, 'coordination.db'))
    fake = startTelnyxFake()
    // Our side of the webhooks: the raw body and the two headers, as the route hands them over.
    ours = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        const refused = await telnyx.webhook(await req.text(), req.headers.get('telnyx-signature-ed25519'), req.headers.get('telnyx-timestamp'), 5_000, async (call) => {
          incoming.push({ from: call.from, to: call.to })
          return call.from === '+14155550666' ? null : { callId: 'in_1', attempt: 1 }
        })
        return refused ? Response.json({ error: refused.refused }, { status: 403 }) : new Response(null, { status: 204 })
      },
    })
    telnyx = new TelnyxTelephony({
      apiKey: fake.apiKey,
      connectionId: fake.connectionId,
      publicKey: fake.publicKey,
      apiBaseUrl: fake.url,
      publicBaseUrl: `http://127.0.0.1:${ours.port}`,
      mediaToken: (callId, attempt) => `tok-${callId}-${attempt}`,
      accountOf: async (number) => accounts.get(number) ?? null,
      claims,
      transferOpen: async () => callerWaiting,
    })
    telnyx.onEvent((e) => void events.push(e))
  })
  afterAll(async () => {
    ours.stop(true)
    await fake.stop()
    await claims.close()
    rmSync(claimsDir, { recursive: true, force: true })
  })
  beforeEach(() => {
    events.length = 0
  })

  test('the dial: Bearer key, the application, our webhook, the try in client_state, machines off', async () => {
    const placed = await place('+14155550101')
    const call = fake.calls.at(-1)!
    expect(placed.callRef).toBe(call.callControlId)
    expect(fake.requests.at(-1)).toEqual({ method: 'POST', path: '/v2/calls', authorized: true })
    expect(call.dial).toEqual({
      connection_id: fake.connectionId,
      to: '+14155550101',
      from: '+14155550100',
      webhook_url: `http://127.0.0.1:${ours.port}/telephony/telnyx/events`,
      webhook_url_method: 'POST',
      client_state: call.dial.client_state,
      answering_machine_detection: 'disabled',
    })
    expect(decodeLegState(call.dial.client_state)).toEqual({ c: 'out_1', a: 2, n: '+14155550100' })
    await place('+14155550102', { detectMachines: true })
    expect(fake.calls.at(-1)!.dial.answering_machine_detection).toBe('detect')
    await place('+14155550103', { detectMachines: true, leaveVoicemail: true })
    expect(fake.calls.at(-1)!.dial.answering_machine_detection).toBe('detect_beep')
  })

  test("Telnyx's refusals fail the placement with its reason: a 422, a wrong key, a rate limit", async () => {
    fake.refuse.add('+14155550199')
    const refused = await place('+14155550199').catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(PlacementRefused)
    expect((refused as Error).message).toBe('Telnyx refused the call: Invalid value for to: The destination number +14155550199 is not a valid phone number. (error 10015)')

    const wrongKey = new TelnyxTelephony({ apiKey: 'KEY-not-ours', connectionId: fake.connectionId, publicKey: fake.publicKey, apiBaseUrl: fake.url, publicBaseUrl: 'http://127.0.0.1:1', claims })
    const unauthorized = await wrongKey.place({ callId: 'out_2', attempt: 1, to: '+14155550101', from: '+14155550100', detectMachines: false }).catch((e: unknown) => e)
    expect((unauthorized as Error).message).toBe('Telnyx refused the call: Authentication failed: The API key provided is not valid. (error 10009)')
    expect(fake.requests.at(-1)!.authorized).toBe(false)

    fake.rateLimited = 1
    const limited = await place('+14155550101').catch((e: unknown) => e)
    expect((limited as Error).message).toBe('Telnyx refused the call: Too many requests: You have exceeded the rate limit for this resource. (error 10011)')
    expect((await place('+14155550101')).callRef).toMatch(/^v3:/)
  })

  test('answered: the chart hears it first, then the stream starts in PCMU rtp, its token in the path', async () => {
    const { callRef } = await place('+14155550104')
    expect(await fake.webhook(callRef, 'call.initiated', { state: 'bridging' })).toBe(204)
    expect(events).toEqual([])
    expect(await fake.webhook(callRef, 'call.answered', { state: 'answered' })).toBe(204)
    expect(events).toEqual([{ type: 'answered', callId: 'out_1', attempt: 2, callRef, at: 5_000 }])
    expect(fake.calls.at(-1)!.actions).toEqual([
      {
        action: 'streaming_start',
        body: {
          stream_url: `ws://127.0.0.1:${ours.port}/media/out_1/tok-out_1-2`,
          stream_track: 'inbound_track',
          stream_codec: 'PCMU',
          stream_bidirectional_mode: 'rtp',
          stream_bidirectional_codec: 'PCMU',
        },
      },
    ])
    expect(await fake.webhook(callRef, 'call.dtmf.received', { digit: '5' })).toBe(204)
    expect(await fake.webhook(callRef, 'call.hangup', { hangup_cause: 'normal_clearing', hangup_source: 'callee' })).toBe(204)
    expect(events.at(-1)).toEqual({ type: 'ended', callId: 'out_1', attempt: 2, callRef, at: 5_000, hangup: 'answered' })
  })

  test('a forged, stale or unsigned webhook is refused and reaches nobody', async () => {
    const { callRef } = await place('+14155550105')
    expect(await fake.webhook(callRef, 'call.answered', {}, { forged: true })).toBe(403)
    expect(await fake.webhook(callRef, 'call.answered', {}, { ageSeconds: TELNYX_SIGNATURE_TOLERANCE_S + 60 })).toBe(403)
    const unsigned = await fetch(`http://127.0.0.1:${ours.port}/telephony/telnyx/events`, { method: 'POST', body: '{}' })
    expect(unsigned.status).toBe(403)
    expect(events).toEqual([])
    expect(fake.calls.at(-1)!.actions).toEqual([])
  })

  test('unanswered causes as the chart names them; our own cancel is no news', async () => {
    const causes: [string, string][] = [
      ['user_busy', 'busy'],
      ['timeout', 'no_answer'],
      ['call_rejected', 'rejected'],
      ['unallocated_number', 'unreachable'],
    ]
    for (const [cause, hangup] of causes) {
      const { callRef } = await place('+14155550106')
      await fake.webhook(callRef, 'call.hangup', { hangup_cause: cause })
      expect(events.at(-1)).toMatchObject({ type: 'unanswered', callRef, hangup })
    }
    const { callRef } = await place('+14155550106')
    const before = events.length
    await fake.webhook(callRef, 'call.hangup', { hangup_cause: 'originator_cancel' })
    expect(events.length).toBe(before)
  })

  test('machines end the try: the answer waits for the verdict; a machine is hung up as voicemail, a person connects', async () => {
    const machine = (await place('+14155550107', { detectMachines: true })).callRef
    await fake.webhook(machine, 'call.answered')
    expect(events).toEqual([])
    await fake.webhook(machine, 'call.machine.detection.ended', { result: 'machine' })
    expect(events).toEqual([{ type: 'unanswered', callId: 'out_1', attempt: 2, callRef: machine, at: 5_000, hangup: 'voicemail' }])
    expect(fake.calls.at(-1)!.actions.map((a) => a.action)).toEqual(['hangup'])

    events.length = 0
    const person = (await place('+14155550108', { detectMachines: true })).callRef
    await fake.webhook(person, 'call.answered')
    await fake.webhook(person, 'call.machine.detection.ended', { result: 'human' })
    expect(events.map((e) => e.type)).toEqual(['answered'])
    expect(fake.calls.at(-1)!.actions.map((a) => a.action)).toEqual(['streaming_start'])
  })

  test('a voicemail drop: connected at once; a machine is reported once its greeting has ended', async () => {
    const { callRef } = await place('+14155550109', { detectMachines: true, leaveVoicemail: true })
    await fake.webhook(callRef, 'call.answered')
    await fake.webhook(callRef, 'call.machine.detection.ended', { result: 'machine' })
    expect(events.map((e) => e.type)).toEqual(['answered'])
    await fake.webhook(callRef, 'call.machine.greeting.ended', { result: 'beep_detected' })
    expect(events.at(-1)).toMatchObject({ type: 'answeredBy', by: 'machine' })
  })

  test("a stream Telnyx will not start fails the call with Telnyx's reason, and hangs it up", async () => {
    const { callRef } = await place('+14155550110')
    fake.rateLimited = 1
    await fake.webhook(callRef, 'call.answered')
    expect(events.map((e) => e.type)).toEqual(['answered', 'ended'])
    expect(events.at(-1)).toMatchObject({ hangup: 'failed', error: 'Telnyx would not stream the call: Too many requests: You have exceeded the rate limit for this resource. (error 10011)' })
    expect(fake.calls.at(-1)!.actions.map((a) => a.action)).toEqual(['hangup'])
  })

  test("cold transfer: the command, then the person's leg answering and ending reach the chart", async () => {
    const { callRef } = await place('+14155550111')
    await telnyx.transfer({ callId: 'out_1', attempt: 2, callRef, to: '+14155550977', from: '+14155550100' })
    const transfer = fake.calls.at(-1)!.actions.at(-1)!
    expect(transfer.action).toBe('transfer')
    expect(transfer.body).toMatchObject({ to: '+14155550977', from: '+14155550100', timeout_secs: 30, webhook_url: `http://127.0.0.1:${ours.port}/telephony/telnyx/events` })
    const leg = transfer.body.target_leg_client_state as string
    expect(decodeLegState(leg)).toEqual({ c: 'out_1', a: 2, l: 'transfer', n: '+14155550100' })
    await fake.webhook('v3:leg', 'call.answered', {}, { clientState: leg, url: transfer.body.webhook_url as string })
    await fake.webhook('v3:leg', 'call.hangup', { hangup_cause: 'normal_clearing' }, { clientState: leg, url: transfer.body.webhook_url as string })
    expect(events).toEqual([
      { type: 'transfer_answered', callId: 'out_1', attempt: 2, callRef: 'v3:leg', at: 5_000 },
      { type: 'transfer_ended', callId: 'out_1', attempt: 2, callRef: 'v3:leg', at: 5_000, outcome: 'answered' },
    ])
    fake.rateLimited = 1
    await expect(telnyx.transfer({ callId: 'out_1', attempt: 2, callRef, to: '+14155550977', from: null })).rejects.toThrow('Telnyx would not transfer the call: Too many requests')
    await expect(telnyx.warmTransfer({ callId: 'out_1', attempt: 2, callRef, to: '+14155550977', from: null, brief: 'x' })).rejects.toThrow('the call has no number of ours to call the person from')
  })

  test('warm: a person who presses 1 after the caller left is told so and let go, never reported as taking the call', async () => {
    const { callRef } = await place('+14155550115')
    const { legRef } = await telnyx.warmTransfer({ callId: 'out_1', attempt: 2, callRef, to: '+14155550978', from: '+14155550100', brief: 'A caller about a refund.' })
    await fake.webhook(legRef, 'call.answered')
    callerWaiting = false
    try {
      await fake.press(legRef, '1')
    } finally {
      callerWaiting = true
    }
    const leg = fake.calls.find((c) => c.callControlId === legRef)!
    expect(leg.actions.map((a) => [a.action, a.body.payload])).toEqual([
      ['gather_using_speak', 'A caller about a refund. Press 1 to take the call.'],
      ['speak', 'Sorry, the caller has already left. Goodbye.'],
    ])
    await fake.webhook(legRef, 'call.speak.ended', { status: 'completed' })
    expect(leg.actions.at(-1)!.action).toBe('hangup')
    expect(events.map((e) => e.type)).toEqual(['transfer_answered'])
  })

  test('hang-up: the command; a call already ended (422) is ended either way; a wrong key throws', async () => {
    const { callRef } = await place('+14155550112')
    await telnyx.hangUp(callRef, true)
    await telnyx.hangUp(callRef, true)
    expect(fake.calls.at(-1)!.actions.map((a) => a.action)).toEqual(['hangup'])
    const wrongKey = new TelnyxTelephony({ apiKey: 'KEY-not-ours', connectionId: fake.connectionId, publicKey: fake.publicKey, apiBaseUrl: fake.url, publicBaseUrl: 'http://127.0.0.1:1', claims })
    await expect(wrongKey.hangUp(callRef, true)).rejects.toThrow('Authentication failed')
  })

  test('an incoming call is answered with its stream when taken, rejected busy when not', async () => {
    await fake.webhook(
      'v3:in-taken',
      'call.initiated',
      { direction: 'incoming', from: '+14155550555', to: '+14155550100', client_state: null },
      { url: `http://127.0.0.1:${ours.port}/telephony/telnyx/events` },
    )
    await until(
      'answered',
      async () => fake.calls.find((c) => c.callControlId === 'v3:in-taken'),
      (c) => !!c,
    )
    const taken = fake.calls.find((c) => c.callControlId === 'v3:in-taken')!
    expect(taken.actions[0]!.action).toBe('answer')
    expect(taken.actions[0]!.body).toMatchObject({ stream_url: `ws://127.0.0.1:${ours.port}/media/in_1/tok-in_1-1`, stream_bidirectional_mode: 'rtp' })
    expect(decodeLegState(taken.actions[0]!.body.client_state)).toEqual({ c: 'in_1', a: 1, n: '+14155550100' })
    await fake.webhook(
      'v3:in-busy',
      'call.initiated',
      { direction: 'incoming', from: '+14155550666', to: '+14155550100', client_state: null },
      { url: `http://127.0.0.1:${ours.port}/telephony/telnyx/events` },
    )
    expect(fake.calls.find((c) => c.callControlId === 'v3:in-busy')!.actions).toEqual([{ action: 'reject', body: { cause: 'USER_BUSY' } }])
    expect(incoming).toEqual([
      { from: '+14155550555', to: '+14155550100' },
      { from: '+14155550666', to: '+14155550100' },
    ])
  })

  test('a number with its own account: placed, streamed and ended with its key; its webhooks verified with its public key', async () => {
    const own = fake.addAccount()
    accounts.set('+14155550200', own)
    const { callRef } = await telnyx.place({ callId: 'out_9', attempt: 1, to: '+14155550113', from: '+14155550200', detectMachines: false })
    const call = fake.calls.at(-1)!
    expect(call.apiKey).toBe(own.apiKey)
    expect(call.dial.connection_id).toBe(own.connectionId)
    // Signed by the instance's account, not the number's: refused.
    expect(await fake.webhook(callRef, 'call.answered', {}, { signedBy: fake.apiKey })).toBe(403)
    expect(events).toEqual([])
    expect(await fake.webhook(callRef, 'call.answered')).toBe(204)
    expect(events.map((e) => e.type)).toEqual(['answered'])
    expect(call.actions.map((a) => a.action)).toEqual(['streaming_start'])
    await telnyx.hangUp(callRef, true, '+14155550200')
    expect(call.actions.map((a) => a.action)).toEqual(['streaming_start', 'hangup'])

    accounts.set('+14155550201', { apiKey: own.apiKey })
    const lacking = await telnyx.place({ callId: 'out_10', attempt: 1, to: '+14155550113', from: '+14155550201', detectMachines: false }).catch((e: unknown) => e)
    expect(lacking).toBeInstanceOf(PlacementRefused)
    expect((lacking as Error).message).toBe('Telnyx cannot place the call: the Telnyx account of +14155550201 has no connectionId, publicKey')
  })

  test('a webhook Telnyx sends again (the same event id) is taken once: one answer, one stream', async () => {
    const { callRef } = await place('+14155550114')
    const eventId = '0ccc7b54-4df3-4bca-a65a-3da1ecc777f0'
    expect(await fake.webhook(callRef, 'call.answered', {}, { eventId })).toBe(204)
    expect(await fake.webhook(callRef, 'call.answered', {}, { eventId })).toBe(204)
    expect(events.map((e) => e.type)).toEqual(['answered'])
    expect(fake.calls.at(-1)!.actions.map((a) => a.action)).toEqual(['streaming_start'])
  })

  test("a number's own account is checked with Telnyx before it is kept: its key, its application, its public key", async () => {
    const own = fake.addAccount()
    await telnyx.verifyAccount(own)
    const refusal = (account: Record<string, string>) =>
      telnyx.verifyAccount(account).then(
        () => null,
        (e: Error) => [e.name, e.message],
      )
    expect(await refusal({ ...own, apiKey: 'KEY-wrong' })).toEqual(['AccountRefused', 'Telnyx refused the account: Authentication failed: The API key provided is not valid. (error 10009)'])
    expect(await refusal({ ...own, connectionId: fake.connectionId })).toEqual([
      'AccountRefused',
      `Telnyx refused the account: Resource not found: Call control application ${fake.connectionId} was not found. (error 10005)`,
    ])
    expect(await refusal({ ...own, publicKey: 'c2hvcnQ=' })).toEqual(['AccountRefused', 'a Telnyx public key is 32 bytes in base64, this one is 5'])
    expect(await refusal({ apiKey: own.apiKey })).toEqual(['AccountRefused', 'a Telnyx account needs connectionId, publicKey'])
    fake.rateLimited = 1
    expect(await refusal(own)).toEqual(['Error', 'Telnyx refused the account: Too many requests: You have exceeded the rate limit for this resource. (error 10011)'])
  })
})
