/**
 * A weak engine's words matched on their sounds (src/providers/stt/sounds-like.ts), through a
 * pronouncing dictionary in the CMU format pocketsphinx reads (a few of its lines, in a temp file).
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PocketsphinxStt } from '../../../src/providers/stt/pocketsphinx'
import { PronouncingDictionary } from '../../../src/providers/stt/sounds-like'
import { STOP_WORDS } from '../../../src/voice/interruption'

// The lines of pocketsphinx-en-us's cmudict-en-us.dict for these words.
const LINES = `all AO L
can K AE N
eight EY T
for F AO R
go G OW
hold HH OW L D
how HH AW
i AY
no N OW
now N AW
oh OW
old OW L D
on AA N
right R AY T
stop S T AA P
the DH AH
the(2) DH IY
top T AA P
wait W EY T
way W EY
yeah Y AE
`
const dir = mkdtempSync(join(tmpdir(), 'sounds-like-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const path = join(dir, 'cmudict.dict')
writeFileSync(path, LINES)
const dictionary = new PronouncingDictionary(path)
const stop = (text: string) => dictionary.soundsLike(text, STOP_WORDS)

test('the engine’s near misses of a stop word sound like it: one sound apart, in its first words', () => {
  expect(dictionary.sounds('the')).toEqual(['DH', 'AH'])
  expect(dictionary.sounds('zyzzyva')).toBeNull()
  for (const heard of ['top', 'way', 'how old on', 'stop', 'i wait']) expect(stop(heard)).toBe(true)
})

test('a short stop word must match exactly, and a sound late in what was heard does not count', () => {
  // "no" is two sounds: "now", "go" and "oh" are one away, and are not it.
  for (const heard of ['now', 'go', 'oh', 'the', 'yeah', 'right', 'i can', 'for all eight', '']) expect(stop(heard)).toBe(false)
})

test('a dictionary that cannot be read makes nothing sound like anything (the engine’s words then count as they are)', () => {
  expect(new PronouncingDictionary(join(dir, 'absent.dict')).soundsLike('top', STOP_WORDS)).toBe(false)
})

test('the per-utterance pocketsphinx, as weak as the live decoder: its words judge no turn and are matched on their sounds', async () => {
  const session = await new PocketsphinxStt('/nonexistent/pocketsphinx_continuous').open()
  expect(session.turnCues).toBe(false)
  expect(typeof session.soundsLike).toBe('function')
  await session.close()
})
