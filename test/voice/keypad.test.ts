/**
 * The keypad in audio: tones written at the Q.23 frequencies are heard back, key by key, through
 * the phone line's mu-law and in any frame size; speech-like sound and silence hold no key.
 */
import { describe, expect, test } from 'bun:test'
import { synthesiseSyllables } from '../../src/providers/tts/sandbox'
import { decodeMulaw, encodeMulaw, PHONE_RATE } from '../../src/voice/codecs'
import { KeypadListener, keypadTones, TONE_GAP_MS, TONE_MS, WAIT_MS } from '../../src/voice/keypad'

function hear(pcm: Int16Array, frame = 160, rate = PHONE_RATE): string {
  const listener = new KeypadListener()
  let keys = ''
  for (let at = 0; at < pcm.length; at += frame) keys += listener.push(pcm.subarray(at, at + frame), rate).join('')
  return keys
}

describe('keypad tones', () => {
  test('every key is heard back as itself, through mu-law, in 20 ms frames', () => {
    const keys = '0123456789*#ABCD'
    expect(hear(decodeMulaw(encodeMulaw(keypadTones(keys))))).toBe(keys)
  })

  test('a key pressed twice in a row counts twice (the gap between them parts them)', () => {
    expect(hear(keypadTones('1122#'))).toBe('1122#')
  })

  test('frame size does not matter, nor a 16 kHz line', () => {
    expect(hear(keypadTones('907#'), 37)).toBe('907#')
    expect(hear(keypadTones('907#', 16_000), 320, 16_000)).toBe('907#')
  })

  test('each key lasts TONE_MS then TONE_GAP_MS; w waits WAIT_MS', () => {
    expect(keypadTones('1').length).toBe(((TONE_MS + TONE_GAP_MS) * PHONE_RATE) / 1000)
    expect(keypadTones('1w2').length).toBe(((2 * (TONE_MS + TONE_GAP_MS) + WAIT_MS) * PHONE_RATE) / 1000)
    expect(() => keypadTones('1x')).toThrow(/not a keypad key/)
  })

  test('voice-like sound and silence hold no key', () => {
    const voice = synthesiseSyllables('hello there I would like to book an appointment for tomorrow', PHONE_RATE)
    expect(voice.length).toBeGreaterThan(PHONE_RATE)
    expect(hear(voice)).toBe('')
    expect(hear(new Int16Array(PHONE_RATE))).toBe('')
  })

  test('a tone too short to be a key press (a click) is not one', () => {
    const short = keypadTones('5').subarray(0, (30 * PHONE_RATE) / 1000)
    expect(hear(short)).toBe('')
  })
})
