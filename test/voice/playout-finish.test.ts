/**
 * A turn that ends with the sentence the caller is hearing (a hand-off, Playout.finishSentence):
 * the pieces up to that sentence's end play (a reply's first piece may be a clause), later ones do
 * not, audio of them already at the line is cleared once the sentence has played, and the heard
 * text ends at the sentence's end.
 */
import { describe, expect, test } from 'bun:test'
import type { OutboundFrame } from '../../src/voice/frames'
import { Playout } from '../../src/voice/playout'

/** 8 kHz, 100 ms chunks; no pacing timer ever fires, so what goes at once is the lead (1 s) and the chunk that reaches it. */
function line() {
  const sent: OutboundFrame[] = []
  const p = new Playout(
    (f) => {
      sent.push(f)
      return true
    },
    { rate: 8000, chunkMs: 100, now: () => 0, timers: { setTimeout: () => 0, clearTimeout: () => {} } },
  )
  const marks = () => sent.filter((f): f is Extract<OutboundFrame, { kind: 'mark' }> => f.kind === 'mark').map((f) => f.name)
  return { p, sent, marks }
}

async function piece(p: Playout, text: string, chunks: number): Promise<void> {
  const s = p.sentence(text)
  await p.audio(s, new Int16Array(800 * chunks))
  p.sentenceDone(s)
}

describe('playout: finishing the sentence being heard', () => {
  test('the sentence heard plays to its end, the next one is cleared at the line, the heard text ends there', async () => {
    const { p, sent, marks } = line()
    const heard: [string, boolean][] = []
    p.begin(1, (h, complete) => heard.push([h, complete]))
    await piece(p, 'Hello,', 3)
    await piece(p, 'this is the front desk.', 5)
    await piece(p, 'Would you like a time on Tuesday?', 10)
    const [, second, ...rest] = marks()
    p.echo(marks()[0]!)
    p.echo(second!) // the caller is inside the clause "Hello,"
    const finished = p.finishSentence()
    for (const m of rest.slice(0, 5)) p.echo(m) // up to the last chunk of "this is the front desk."
    expect(heard).toEqual([])
    p.echo(rest[5]!)
    await finished
    expect(heard).toEqual([['Hello, this is the front desk.', true]])
    // The question's first chunks were already at the line: they go, and their echoes count for nothing.
    expect(sent.at(-1)).toEqual({ kind: 'clear' })
    for (const m of rest.slice(6)) p.echo(m)
    expect(heard).toEqual([['Hello, this is the front desk.', true]])
  })

  test('asked before the sentence is written: its pieces play as they come, later ones never reach the line', async () => {
    const { p, sent, marks } = line()
    let heard = ''
    p.begin(1, (h) => (heard = h))
    await piece(p, 'Hello,', 2)
    p.echo(marks()[0]!)
    const finished = p.finishSentence()
    await piece(p, 'this is the desk.', 2)
    const before = sent.length
    await piece(p, 'More words that are never heard.', 4)
    expect(sent.length).toBe(before)
    for (const m of marks()) p.echo(m)
    await finished
    expect(heard).toBe('Hello, this is the desk.')
    expect(sent.filter((f) => f.kind === 'clear')).toEqual([])
  })

  test('nothing of the turn at the line yet: over at once', async () => {
    const { p } = line()
    p.begin(1, () => {})
    p.sentence('Not yet synthesised.')
    await p.finishSentence()
  })
})
