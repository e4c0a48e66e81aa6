/**
 * Admission control's rules (src/features/calls/placing/admission.ts): each headroom signal refuses past
 * its limit and says so, admitted calls hold their room until their media opens or they end,
 * refusals are counted by direction and signal, and a waiting call waits until there is room.
 */
import { describe, expect, test } from 'bun:test'
import { Admission, type AdmissionLimits, isRefusal, type Refusal, type Ticket, waitForRoom } from '../../../../src/features/calls/placing/admission'

const LIMITS: AdmissionLimits = { maxCalls: 2, maxLoopLagMs: 200, minPlayoutLeadMs: 500, maxDecoderWaitMs: 1_000, maxRssBytes: 1_000 * 1_048_576 }

function rig(limits: Partial<AdmissionLimits> = {}) {
  let clock = 0
  const media = new Map<string, unknown>()
  const signals = { loopLagMs: 0, playoutLeadMs: null as number | null, decoderWaitMs: 0, rssBytes: 100 * 1_048_576 }
  const admission = new Admission(
    { ...LIMITS, ...limits },
    {
      media: () => media,
      loopLagMs: () => signals.loopLagMs,
      playoutLeadMs: () => signals.playoutLeadMs,
      decoderWaitMs: () => signals.decoderWaitMs,
      rssBytes: () => signals.rssBytes,
    },
    () => clock,
  )
  return { admission, media, signals, advance: (ms: number) => (clock += ms) }
}

const ticket = (r: Ticket | Refusal): Ticket => {
  if (isRefusal(r)) throw new Error(`refused: ${r.message}`)
  return r
}

describe('admission', () => {
  test('calls: admitted ones count from admission until their media opens, then as media; past the limit refused', () => {
    const { admission, media } = rig()
    ticket(admission.admit('outbound')).bind('c1')
    ticket(admission.admit('inbound')).bind('c2')
    expect(admission.liveCalls).toBe(2)
    const refused = admission.admit('outbound') as Refusal
    expect(refused).toMatchObject({ reason: 'calls' })
    expect(refused.message).toContain('CALLS_MAX_LIVE 2')
    // Media opened for c1: counted once, not twice.
    media.set('c1', {})
    expect(admission.liveCalls).toBe(2)
    // c2 ended unanswered: its room is free.
    admission.ended('c2')
    expect(admission.liveCalls).toBe(1)
    expect(isRefusal(admission.admit('outbound'))).toBe(false)
    expect(admission.admitted).toEqual({ outbound: 2, inbound: 1, web: 0 })
    expect([...admission.refused]).toEqual([['outbound:calls', 1]])
  })

  test('an admission whose call was never created frees its room: released, or after 5 s unbound', () => {
    const { admission, advance } = rig({ maxCalls: 1 })
    ticket(admission.admit('outbound')).release()
    expect(admission.liveCalls).toBe(0)
    ticket(admission.admit('outbound'))
    expect(admission.liveCalls).toBe(1)
    advance(5_001)
    expect(admission.liveCalls).toBe(0)
  })

  test('a call that rings past a minute without media no longer counts', () => {
    const { admission, advance } = rig({ maxCalls: 1 })
    ticket(admission.admit('outbound')).bind('c1')
    advance(59_000)
    expect(admission.liveCalls).toBe(1)
    advance(2_000)
    expect(admission.liveCalls).toBe(0)
  })

  test('each signal past its limit refuses, naming it; back under, admitted', () => {
    const { admission, signals } = rig({ maxCalls: 100 })
    const cases: [() => void, () => void, Refusal['reason'], string][] = [
      [() => (signals.loopLagMs = 250), () => (signals.loopLagMs = 20), 'loop_lag', 'event loop is 250 ms late'],
      [() => (signals.playoutLeadMs = 300), () => (signals.playoutLeadMs = 990), 'playout_lead', 'only 300 ms ahead'],
      [() => (signals.decoderWaitMs = 1_500), () => (signals.decoderWaitMs = 0), 'decoder_queue', 'wait 1500 ms for a speech decoder'],
      [() => (signals.rssBytes = 1_200 * 1_048_576), () => (signals.rssBytes = 100 * 1_048_576), 'memory', '1200 MB of memory'],
    ]
    for (const [over, under, reason, words] of cases) {
      over()
      const r = admission.admit('inbound') as Refusal
      expect(r.reason).toBe(reason)
      expect(r.message).toContain(words)
      under()
      expect(isRefusal(admission.admit('inbound'))).toBe(false)
    }
    expect(Object.fromEntries(admission.refused)).toEqual({ 'inbound:loop_lag': 1, 'inbound:playout_lead': 1, 'inbound:decoder_queue': 1, 'inbound:memory': 1 })
    // No call sent audio lately: the lead says nothing.
    signals.playoutLeadMs = null
    expect(admission.check()).toBeNull()
  })

  test('a waiting call waits for room, then takes it; one that never gets room has the last refusal', async () => {
    const { admission, media } = rig({ maxCalls: 1 })
    media.set('live', {})
    setTimeout(() => media.delete('live'), 30)
    const room = await waitForRoom(admission, 2_000, 10)
    expect(isRefusal(room)).toBe(false)
    expect(admission.liveCalls).toBe(1)
    const never = await waitForRoom(admission, 50, 10)
    expect(never).toMatchObject({ reason: 'calls' })
  })
})
