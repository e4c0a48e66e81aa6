/**
 * Rate changes (src/voice/codecs.ts `resample`): what reaches the line from a TTS at 22,050 or
 * 16,000 Hz keeps the voice band and does not fold higher frequencies back into it.
 */
import { describe, expect, test } from 'bun:test'
import { resample } from '../../src/voice/codecs'

const tone = (hz: number, rate: number, seconds: number, amplitude = 10_000) =>
  Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)))
/** RMS away from the edges (the chunk's ends hold their edge sample). */
const rms = (x: Int16Array) => {
  const inner = x.subarray(100, x.length - 100)
  return Math.sqrt(inner.reduce((s, v) => s + v * v, 0) / inner.length)
}
const db = (out: Int16Array, input: Int16Array) => 20 * Math.log10(rms(out) / rms(input))

describe('resample', () => {
  test('down to the line: the voice band passes, what would alias is stopped', () => {
    for (const from of [22_050, 16_000, 24_000]) {
      for (const hz of [300, 1_000, 3_000]) expect(Math.abs(db(resample(tone(hz, from, 0.5), from, 8_000), tone(hz, from, 0.5)))).toBeLessThan(0.5)
      // 5 kHz and 6 kHz at 8 kHz would be heard at 3 kHz and 2 kHz.
      for (const hz of [5_000, 6_000]) expect(db(resample(tone(hz, from, 0.5), from, 8_000), tone(hz, from, 0.5))).toBeLessThan(-40)
    }
  })

  test('lengths follow the rates; silence and a constant stay as they are', () => {
    expect(resample(new Int16Array(1_600), 16_000, 8_000).length).toBe(800)
    expect(resample(new Int16Array(2_205), 22_050, 8_000).length).toBe(800)
    expect(resample(new Int16Array(160), 8_000, 16_000).length).toBe(320)
    expect([...resample(new Int16Array(2_205).fill(1234), 22_050, 8_000)].every((v) => v === 1234)).toBe(true)
    expect([...resample(new Int16Array(2_205), 22_050, 8_000)].every((v) => v === 0)).toBe(true)
    const same = new Int16Array([1, 2, 3])
    expect(resample(same, 8_000, 8_000)).toBe(same)
  })

  test("up from the line: linear between the samples, none held flat at the chunk's end; down, a full-scale input does not wrap", () => {
    expect([...resample(new Int16Array([0, 100, 200, 300]), 8_000, 16_000)]).toEqual([0, 38, 75, 113, 150, 188, 225, 263])
    const loud = tone(1_000, 22_050, 0.2, 32_767)
    const out = resample(loud, 22_050, 8_000)
    expect(Math.max(...out)).toBeLessThanOrEqual(32_767)
    expect(Math.max(...out)).toBeGreaterThan(32_000)
  })
})
