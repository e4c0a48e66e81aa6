/**
 * The sandbox callee's script lines made into what it sends: a line said in turn, over the agent
 * (`>`), a wordless noise (`~`), keys (`[keypad] 1234#`), a phone menu (`[menu 1] …`), each with
 * its timing prefix (`[wait 3000]`, `[after 1500]`); sandbox-callee.ts explains the script.
 */

import type { TextToSpeech } from '../../voice/public'
import { joinPcm, KEYPAD_LINE, keypadTones, PHONE_RATE, resample } from '../../voice/public'
import { synthesiseSyllables } from '../tts/sandbox'

/** A `~` noise burst: well past the backchannel filter (300 ms) after Silero's onset, no words. */
const NOISE_MS = 800
/** An answering machine's beep: 1 kHz for 500 ms, as common mailboxes sound it. */
const BEEP_HZ = 1_000
const BEEP_MS = 500

/** A line of the script, made into the audio the callee sends. */
export interface CalleeLine {
  text: string
  kind: 'turn' | 'interrupt' | 'noise' | 'machine'
  audio: Int16Array
  /** Where its speech ends in `audio` (TTS pads lines with silence): the caller's last word. */
  speechEnd: number
  /** Keys pressed, not words said: nothing for the speech-to-text to hear. */
  keys?: string
  /** A phone menu: the keys it waits for, and what it says when it hears others. */
  menu?: { expects: string; retry: CalleeLine }
  /** A turn: the agent's pause it waits for; a `>`/`~` line: how far into the agent's speech it starts. */
  waitMs?: number
  afterMs?: number
}

/** `[wait 3000]` / `[after 1500]` at the start of a line's text: the number, and the text after it. */
const TIMING = /^\[(wait|after) (\d{1,6})\]\s*/

/** What a phone menu says before it repeats itself, on keys it has no option for. */
export const MENU_RETRY = 'Sorry, that is not an option.'

/** Louder than this is speech when finding where a line's words end (~-40 dBFS; TTS pads with digital silence). */
const SPEECH_FLOOR = 328

/** `[clip 2]` at the start of a line's words: the recorded audio it plays, and the words heard in it. */
const CLIP = /^\[clip (\d{1,3})\]\s*/

export async function prepareLine(raw: string, tts: TextToSpeech, voice = 'leo', clips: Int16Array[] = []): Promise<CalleeLine> {
  const kind = raw.startsWith('>') ? 'interrupt' : raw.startsWith('~') ? 'noise' : 'turn'
  const marked = kind === 'turn' ? raw.trim() : raw.slice(1).trim()
  const timing = TIMING.exec(marked)
  if (timing && timing[1] === (kind === 'turn' ? 'wait' : 'after')) {
    const line = await prepareLine(`${kind === 'turn' ? '' : raw[0]}${marked.slice(timing[0].length)}`, tts, voice, clips)
    return kind === 'turn' ? { ...line, waitMs: Number(timing[2]) } : { ...line, afterMs: Number(timing[2]) }
  }
  const clip = CLIP.exec(marked)
  if (clip && kind !== 'noise') {
    const audio = clips[Number(clip[1])]
    if (!audio) throw new Error(`a callee line plays clip ${clip[1]}, which it was not given`)
    return { text: marked.slice(clip[0].length), kind, audio, speechEnd: audio.length }
  }
  const text = marked
  const menu = kind === 'turn' ? /^\[menu ([0-9*#]+)\]\s*(.+)$/.exec(text) : null
  if (menu) {
    const [, expects, prompt] = menu
    const line = await prepareLine(prompt!, tts, voice)
    const retry = await prepareLine(`${MENU_RETRY} ${prompt}`, tts, voice)
    retry.menu = { expects: expects!, retry }
    return { ...line, menu: { expects: expects!, retry } }
  }
  const keys = kind === 'turn' ? new RegExp(`^${KEYPAD_LINE.source}$`).exec(text)?.[1] : undefined
  if (keys) {
    const audio = keypadTones(keys, PHONE_RATE)
    return { text, kind, audio, speechEnd: audio.length, keys }
  }
  if (kind === 'noise') {
    const noise = synthesiseSyllables('mmmmmmmmmmmmmmm', PHONE_RATE).subarray(0, (NOISE_MS * PHONE_RATE) / 1000)
    return { text: '', kind, audio: noise, speechEnd: noise.length }
  }
  const parts: Int16Array[] = []
  for await (const pcm of tts.synthesize(text, { voice, language: 'en' })) parts.push(resample(pcm, tts.sampleRate, PHONE_RATE))
  const audio = joinPcm(parts)
  let speechEnd = audio.length
  while (speechEnd > 0 && Math.abs(audio[speechEnd - 1]!) < SPEECH_FLOOR) speechEnd--
  return { text, kind, audio, speechEnd }
}

/** An answering machine's greeting (its speech, not its trailing silence), then its beep. */
export async function machineLine(greeting: string, tts: TextToSpeech, voice?: string): Promise<CalleeLine> {
  const said = await prepareLine(greeting, tts, voice)
  const beep = tone(BEEP_HZ, BEEP_MS)
  const audio = new Int16Array(said.speechEnd + beep.length)
  audio.set(said.audio.subarray(0, said.speechEnd))
  audio.set(beep, said.speechEnd)
  return { text: said.text, kind: 'machine', audio, speechEnd: audio.length }
}

/** A pure tone at half scale. */
function tone(hz: number, ms: number): Int16Array {
  const out = new Int16Array((PHONE_RATE * ms) / 1000)
  for (let i = 0; i < out.length; i++) out[i] = Math.round(16_000 * Math.sin((2 * Math.PI * hz * i) / PHONE_RATE))
  return out
}
