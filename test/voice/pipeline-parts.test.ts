/** The pipeline's small parts on their own: sentence chunking, endpointing, the playout's heard-text cut. */
import { describe, expect, test } from 'bun:test'
import type { OutboundFrame } from '../../src/voice/frames'
import { isBackchannel } from '../../src/voice/phrases'
import { MAX_QUEUED_MS, Playout } from '../../src/voice/playout'
import { ClauseChunker, SentenceChunker } from '../../src/voice/sentences'
import { TurnDetector } from '../../src/voice/turns'

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
  test('a turn starts after 64 ms of speech, pauses at the first silent window (at the last speech), goes on after 64 ms more; end() closes it', () => {
    const t = new TurnDetector()
    let at = 0
    const w = (speech: boolean) => {
      at += 32
      return t.window(speech, 32, at)
    }
    expect(w(true)).toBeNull()
    expect(w(true)).toMatchObject({ type: 'speech_start' })
    for (let i = 0; i < 5; i++) w(true)
    const lastSpeech = at
    const events = Array.from({ length: 7 }, () => w(false)).filter(Boolean)
    expect(events).toEqual([{ type: 'pause', at: lastSpeech, speechMs: 7 * 32 }])
    // One window of speech is a click: no resumption; two are. Until it is one or the other, the
    // caller may be going on (the chart does not end the turn on it).
    expect(t.resuming).toBe(false)
    expect(w(true)).toBeNull()
    expect(t.resuming).toBe(true)
    expect(w(false)).toBeNull()
    expect(t.resuming).toBe(false)
    expect(w(true)).toBeNull()
    expect(w(true)).toMatchObject({ type: 'speech_start' })
    expect(t.resuming).toBe(false)
    expect(t.inTurnNow).toBe(true)
    t.end()
    expect(t.inTurnNow).toBe(false)
    expect(w(false)).toBeNull()
  })

  test('backchannels are recognised however they are written', () => {
    for (const b of ['Uh-huh.', 'okay', 'Mm hmm', 'Yeah!', 'got it']) expect(isBackchannel(b)).toBe(true)
    expect(isBackchannel('okay, but when do you open?')).toBe(false)
  })

  test('a hyphen kept and short runs of acknowledgements are backchannels; a stop word or more words are not', () => {
    for (const b of ['Mm-hmm.', 'Okay, yeah.', 'yeah, yeah', 'Mm-hmm, right.', 'Oh, okay.', 'Yeah, yeah, yeah.', 'Uh huh, I see.']) expect(isBackchannel(b)).toBe(true)
    for (const t of ['No.', 'Stop.', 'Wait.', 'Hold on.', 'Okay, stop.', 'Yeah, no.', 'Yeah, wait.', 'Okay, hold on.', 'okay okay okay okay okay', 'Right, so what about Friday?', '', '...']) {
      expect(isBackchannel(t)).toBe(false)
    }
  })
})

describe('playout', () => {
  test('paced chunks each followed by a mark; the heard text is cut at the last echoed mark, to a whole word', async () => {
    const sent: OutboundFrame[] = []
    let now = 0
    const p = new Playout(
      (f) => {
        sent.push(f)
        return true
      },
      { rate: 8000, chunkMs: 100, now: () => now },
    )
    let heard = null as string | null
    p.begin(1, (h) => (heard = h))
    const s = p.sentence('We are open from seven to seven every day.')
    await p.audio(s, new Int16Array(16_000)) // 2 s: twenty chunks
    p.sentenceDone(s)
    p.end()
    // Only the lead (1 s) and the chunk that reaches it go at once, each followed by its mark.
    expect(sent.map((f) => f.kind)).toEqual(Array.from({ length: 11 }, () => ['audio', 'mark'] as const).flat())
    // The caller heard the first six chunks (30%), then interrupted.
    for (const f of sent.filter((f): f is Extract<OutboundFrame, { kind: 'mark' }> => f.kind === 'mark').slice(0, 6)) p.echo(f.name)
    now = 650
    const cut = p.clear()!
    expect(cut.heard).toBe('We are open')
    expect(cut.unheardOfSentence).toBe('from seven to seven every day.')
    expect(heard).toBe('We are open')
    expect(sent.at(-1)).toEqual({ kind: 'clear' })
  })
})

describe('playout: audio belongs to the turn that made its sentence', () => {
  test("a superseded turn's late audio is dropped, not played inside the next turn", async () => {
    const sent: OutboundFrame[] = []
    const p = new Playout(
      (f) => {
        sent.push(f)
        return true
      },
      { rate: 8000, chunkMs: 100, now: () => 0 },
    )
    p.begin(1, () => {})
    const old = p.sentence('The old reply.')
    await p.audio(old, new Int16Array(800))
    p.clear() // the caller barged in; the old turn's engine may still yield a chunk
    p.begin(2, () => {})
    const next = p.sentence('The new reply.')
    const before = sent.length
    await p.audio(old, new Int16Array(800).fill(1000)) // the old turn's chunk, late
    expect(sent.length).toBe(before)
    await p.audio(next, new Int16Array(800))
    const audio = sent.slice(before).filter((f): f is Extract<OutboundFrame, { kind: 'audio' }> => f.kind === 'audio')
    expect(audio).toHaveLength(1)
    expect(audio[0]!.pcm.every((v) => v === 0)).toBe(true)
  })
})

describe('playout backpressure', () => {
  test('TTS waits once MAX_QUEUED_MS of audio waits to be sent; a clear lets it go', async () => {
    const now = 0
    const p = new Playout(() => true, { rate: 8000, chunkMs: 100, now: () => now })
    p.begin(1, () => {})
    const s = p.sentence('A long reply.')
    let short = false
    await p.audio(s, new Int16Array((8000 * MAX_QUEUED_MS) / 1000)).then(() => (short = true))
    expect(short).toBe(true) // the lead went out, so what waits is under the bound
    let long = false
    const waiting = p.audio(s, new Int16Array((8000 * MAX_QUEUED_MS) / 1000)).then(() => (long = true))
    await Bun.sleep(5)
    expect(long).toBe(false)
    p.clear()
    await waiting
    expect(long).toBe(true)
  })
})

describe('clauses', () => {
  test('the first piece ends at its first clause once it is long enough; the rest goes by sentences', () => {
    const c = new ClauseChunker()
    expect(c.push('Then ')).toEqual([])
    expect(c.push('I, ')).toEqual([])
    expect(c.push('can help with that, ')).toEqual(['Then I, can help with that,'])
    expect(c.push('we open at eight, every day. ')).toEqual(['we open at eight, every day.'])
    expect(c.push('See you then, ')).toEqual([])
    expect(c.flush()).toEqual(['See you then,'])
  })

  test('an opener the speaker pauses after goes alone, so its audio starts while the model writes on', () => {
    const c = new ClauseChunker()
    expect(c.push('Sure, ')).toEqual(['Sure,'])
    expect(c.push('I can help with that. ')).toEqual(['I can help with that.'])
    const d = new ClauseChunker()
    expect(d.push('Of course, we open then. ')).toEqual(['Of course,', 'we open then.'])
    expect(new ClauseChunker().push('Surely, ')).toEqual([])
  })

  test('a first sentence shorter than its first clause goes whole', () => {
    const c = new ClauseChunker()
    expect(c.push('We open at eight on Sundays. Then, ')).toEqual(['We open at eight on Sundays.'])
  })
})
