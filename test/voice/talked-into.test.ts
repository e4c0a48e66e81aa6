/**
 * Pauses the agent talked into (src/voice/talked-into.ts): a caller who goes on within a second of
 * the first audio of the agent's answer is counted once on the call, and one who waits longer is
 * not; stepped on a simulated clock (test/support/turn-harness.ts).
 */
import { expect, test } from 'bun:test'
import { TALKED_INTO_MS } from '../../src/voice/talked-into'
import { FRAME_MS, flush, turnHarness } from '../support/turn-harness'

/** The answer, "We open at eight on Sundays.", plays for 2.8 s: the caller speaks while it plays. */
const MS_PER_CHAR = 100

/** A caller asks a question, and the agent's answer starts: the harness and the counts its line heard. */
async function answered() {
  const counts: number[] = []
  const h = turnHarness({ msPerChar: MS_PER_CHAR, line: { talkedInto: (n) => counts.push(n) } })
  h.session.start(8000)
  await flush()
  await h.speak(400, 'What time do you open on Sunday?')
  for (let waited = 0; h.session.state !== 'speaking'; waited += FRAME_MS) {
    expect(waited).toBeLessThan(5_000)
    await h.silence(FRAME_MS)
  }
  return { h, counts }
}

test('the caller goes on 300 ms into the answer: one pause talked into', async () => {
  const { h, counts } = await answered()
  await h.silence(300)
  await h.speak(400, 'and on Saturday')
  expect(counts).toEqual([1])
  await h.session.close()
})

test('the caller speaks past a second into the answer: not counted', async () => {
  const { h, counts } = await answered()
  await h.silence(TALKED_INTO_MS + 200)
  await h.speak(400, 'and on Saturday')
  expect(counts).toEqual([])
  await h.session.close()
})
