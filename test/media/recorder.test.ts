/**
 * The recorder's raw sides left by a process that died mid-call are finished into the WAV: whole
 * samples only (a kill can cut the last one in half), one side missing counts as silence.
 */
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WaveFile } from 'wavefile'
import { finishLeftRecording } from '../../src/media/recorder'

const dir = mkdtempSync(join(tmpdir(), 'recorder-left-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('left raw files are mixed into the WAV and removed; none left: nothing to finish', async () => {
  // Three whole samples (1, 2, 3) and half of a fourth, written little-endian; no agent side.
  writeFileSync(join(dir, 'call-1.caller.raw'), new Uint8Array([1, 0, 2, 0, 3, 0, 4]))
  const path = await finishLeftRecording(dir, 'call-1')
  expect(path).toBe(join(dir, 'call-1.wav'))
  const wav = new WaveFile(new Uint8Array(await Bun.file(path!).arrayBuffer()))
  expect(Array.from(wav.getSamples(false, Int16Array) as ArrayLike<number>)).toEqual([1, 2, 3])
  expect(existsSync(join(dir, 'call-1.caller.raw'))).toBe(false)
  expect(await finishLeftRecording(dir, 'call-1')).toBeNull()
  expect(await finishLeftRecording(dir, 'never')).toBeNull()
})
