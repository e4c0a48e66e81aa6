/**
 * The sandbox speech-to-text follows its scripted caller's words through the caller's stream when
 * the callee says where its line starts: a word shows once its share of the line's audio has been
 * pushed, however long the host took to push it.
 */
import { expect, test } from 'bun:test'
import { SandboxScripts, SandboxStt } from '../../../src/providers/stt/sandbox'

test('words follow the audio pushed, not the host’s time', async () => {
  let wall = 0
  const scripts = new SandboxScripts(() => wall)
  const session = await new SandboxStt(scripts, 'call-1').open()
  const partials: string[] = []
  session.onPartial?.((p) => partials.push(p.text))
  const frame = new Int16Array(160) // 20 ms at 8 kHz
  for (let at = 20; at <= 1_000; at += 20) session.push(frame, at)
  // The line starts 1 s into the stream and lasts 1 s: four words, one per 250 ms of its audio.
  scripts.said('call-1', 'What time do you', 1_000, 1_000)
  wall = 60_000 // the host stalled a minute: nothing of the line has been pushed yet
  session.push(frame, 1_020)
  expect(scripts.peek('call-1')).toBe('')
  for (let at = 1_040; at <= 1_500; at += 20) session.push(frame, at)
  expect(scripts.peek('call-1')).toBe('What time')
  for (let at = 1_520; at <= 2_000; at += 20) session.push(frame, at)
  expect(await session.finalize()).toBe('What time do you')
  expect(partials).toEqual(['What', 'What time', 'What time do', 'What time do you'])
})

test('a line said without its place in the stream follows the host’s time, as before', () => {
  let wall = 0
  const scripts = new SandboxScripts(() => wall)
  scripts.said('call-2', 'one two', 1_000)
  wall = 500
  expect(scripts.peek('call-2')).toBe('one')
})
