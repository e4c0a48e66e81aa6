/**
 * The call record's transcript as the agent plays: what the caller has heard of a turn is written
 * while it plays (so a process that dies mid-turn keeps it), and the turn's final line replaces it.
 */
import { describe, expect, test } from 'bun:test'
import { CallRecord, type CallRecordDeps } from '../../../../src/features/calls/live/call-record'
import type { CallTryDoc } from '../../../../src/features/calls/records/repository'
import type { WorkspaceDoc } from '../../../../src/kernel/tenancy'
import { createLogger } from '../../../../src/logger'

function record() {
  const written: CallTryDoc['transcript'][] = []
  const deps = {
    tries: { update: async (_id: string, patch: Partial<CallTryDoc>) => void (patch.transcript && written.push(patch.transcript)) },
    clock: { now: () => Date.parse('2026-11-26T12:00:00Z') },
    logger: createLogger('silent'),
  }
  const row = { id: 'try_1', callId: 'call_1', attempt: 1, transcript: [] }
  // The record writes only through tries.update and reads the clock: the rest of its deps and row are not used here.
  return { rec: new CallRecord(deps as unknown as CallRecordDeps, row as unknown as CallTryDoc, {} as WorkspaceDoc), written }
}

const texts = (t: CallTryDoc['transcript'] | undefined) => (t ?? []).map((l) => `${l.speaker}: ${l.text}`)

describe('call record transcript', () => {
  test('a turn is written as it is heard, and its final line takes the same place', async () => {
    const { rec, written } = record()
    await rec.said('customer', 'What time do you open?')
    await rec.hearing('We open at eight.', 7)
    await rec.said('customer', 'Sorry?')
    await rec.hearing('We open at eight. On Sundays at nine.', 7)
    expect(texts(written.at(-1))).toEqual(['customer: What time do you open?', 'agent: We open at eight. On Sundays at nine.', 'customer: Sorry?'])
    await rec.said('agent', 'We open at eight. On Sundays at nine, and', 7)
    expect(texts(written.at(-1))).toEqual(['customer: What time do you open?', 'agent: We open at eight. On Sundays at nine, and', 'customer: Sorry?'])
    // A write already made is not changed by later ones (each is a copy).
    expect(texts(written[1])).toEqual(['customer: What time do you open?', 'agent: We open at eight.'])
  })

  test('two turns playing at once keep their own lines; a turn heard as nothing leaves none', async () => {
    const { rec, written } = record()
    await rec.hearing('First turn.', 1)
    await rec.hearing('Second', 2)
    await rec.said('agent', 'First turn, cut.', 1)
    await rec.said('agent', '', 2)
    expect(texts(written.at(-1))).toEqual(['agent: First turn, cut.'])
    await rec.said('agent', 'A line with no turn.')
    expect(texts(written.at(-1))).toEqual(['agent: First turn, cut.', 'agent: A line with no turn.'])
    // A late report of a finished turn changes nothing.
    await rec.hearing('First', 1)
    expect(texts(written.at(-1))).toEqual(['agent: First turn, cut.', 'agent: A line with no turn.'])
  })
})
