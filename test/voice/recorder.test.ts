/**
 * The recorder's raw sides left by a process that died mid-call are finished into the WAV: whole
 * samples only (a kill can cut the last one in half), one side missing counts as silence. The
 * caller's side is also kept alone, and the recorder places turns and the agent's speech on its timeline.
 */
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WaveFile } from 'wavefile'
import { callerWav, finishLeftRecording, Recorder, wavSamples } from '../../src/voice/recorder'

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

test('the caller’s side is kept alone beside the mix, with its turns and the agent’s speech on its timeline', async () => {
  const rec = await Recorder.open(dir, 'call-2')
  const tone = (n: number, v: number) => new Int16Array(n).fill(v)
  // 100 ms of the caller (800 samples at 8 kHz), then the agent answers for 50 ms while the caller is silent.
  rec.fromCaller(tone(800, 1000), 8_000)
  rec.turnEnded()
  rec.fromAgent(tone(400, 500), 8_000)
  rec.fromCaller(tone(800, 0), 8_000)
  // A gap longer than a breath: the agent's next stretch is another.
  rec.fromCaller(tone(8_000, 0), 8_000)
  rec.fromAgent(tone(800, 500), 8_000)
  const mix = await rec.finish()
  rec.turnEnded()
  expect(rec.timeline()).toEqual({
    turnEndsMs: [100],
    agentMs: [
      [100, 150],
      [1200, 1300],
    ],
  })
  const caller = wavSamples(new Uint8Array(await Bun.file(callerWav(mix)).arrayBuffer()))
  expect(caller.length).toBe(9_600)
  expect([caller[0], caller[799], caller[800]]).toEqual([1000, 1000, 0])
  const mixed = wavSamples(new Uint8Array(await Bun.file(mix).arrayBuffer()))
  expect([mixed[0], mixed[800], mixed[1_200]]).toEqual([1000, 500, 0])
})
