/** The pipeline's small parts on their own: sentence chunking, endpointing, the playout's heard-text cut. */
import { describe, expect, test } from 'bun:test'
import type { OutboundFrame } from '../../src/media/frames'
import { Playout } from '../../src/media/playout'
import { SentenceChunker } from '../../src/media/sentences'
import { TurnDetector } from '../../src/media/turns'
import { isBackchannel } from '../../src/media/phrases'

describe('sentence chunking', () => {
  test('whole sentences as the text streams; abbreviations and decimals do not end one; the rest on flush', () => {
    const c = new SentenceChunker()
    expect(c.push('Dr. Rao sees patients from 9.30 am. ')).toEqual(['Dr. Rao sees patients from 9.30 am.'])
    expect(c.push('Parking is free')).toEqual([])
    expect(c.push(' behind the shop! And')).toEqual(['Parking is free behind the shop!'])
    expect(c.flush()).toEqual(['And'])
  })

  test('text without an ending is still spoken once flushed; a run-on is cut near the limit', () => {
    const c = new SentenceChunker()
    expect(c.push('Your appointment tomorrow')).toEqual([])
    expect(c.flush()).toEqual(['Your appointment tomorrow'])
    const long = new SentenceChunker().push(`${'word '.repeat(50)}`)
    expect(long.length).toBe(1)
    expect(long[0]!.length).toBeLessThanOrEqual(160)
  })
})

describe('endpointing', () => {
  test('a turn starts after 64 ms of speech and ends after the silence threshold, at the last speech', () => {
    const t = new TurnDetector(200)
    let at = 0
    const w = (speech: boolean) => t.window(speech, 32, (at += 32))
    expect(w(true)).toBeNull()
    expect(w(true)).toMatchObject({ type: 'speech_start' })
    for (let i = 0; i < 5; i++) w(true)
    const lastSpeech = at
    const events = Array.from({ length: 7 }, () => w(false)).filter(Boolean)
    expect(events).toEqual([{ type: 'speech_end', at: lastSpeech, speechMs: 7 * 32 }])
  })

  test('backchannels are recognised however they are written', () => {
    for (const b of ['Uh-huh.', 'okay', 'Mm hmm', 'Yeah!', 'got it']) expect(isBackchannel(b)).toBe(true)
    expect(isBackchannel('okay, but when do you open?')).toBe(false)
  })
})

describe('playout', () => {
  test('paced chunks each followed by a mark; the heard text is cut at the last echoed mark, to a whole word', async () => {
    const sent: OutboundFrame[] = []
    let now = 0
    const p = new Playout((f) => (sent.push(f), true), { rate: 8000, chunkMs: 100, now: () => now })
    let heard = null as string | null
    p.begin(1, (h) => (heard = h))
    const s = p.sentence('We are open from seven to seven every day.')
    await p.audio(s, new Int16Array(8000)) // 1 s: ten chunks
    p.sentenceDone(s)
    p.end()
    // Only the lead (200 ms) goes at once; then one mark per chunk.
    expect(sent.map((f) => f.kind)).toEqual(['audio', 'mark', 'audio', 'mark', 'audio', 'mark'])
    // The caller heard the first three chunks (30%), then interrupted.
    for (const f of sent.filter((f): f is Extract<OutboundFrame, { kind: 'mark' }> => f.kind === 'mark')) p.echo(f.name)
    now = 250
    const cut = p.clear()!
    expect(cut.heard).toBe('We are open')
    expect(cut.unheardOfSentence).toBe('from seven to seven every day.')
    expect(heard).toBe('We are open')
    expect(sent.at(-1)).toEqual({ kind: 'clear' })
  })
})
