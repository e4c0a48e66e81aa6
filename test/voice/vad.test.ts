/**
 * The VAD judges audio the same however it is pushed: frame by frame as it arrives, or in one
 * piece after the session fell behind (several windows of a call then run as steps of one batch on
 * the model's thread), across the resets of its state after a second of quiet too. Each window
 * says how far into the pushed audio it reaches, so the session can give it the arrival time of
 * the frame that completed it. And it hears a caller late in a call as well as at its start.
 * Real Silero model, espeak-ng speech.
 */
import { expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { decodeMulaw, encodeMulaw, PHONE_RATE, resample } from '../../src/voice/codecs'
import { INPUT } from '../../src/voice/silero-batch'
import { EnergyVad, loadSilero, SileroVad, type VadWindow } from '../../src/voice/vad'
import { describeNeeding, systemBinary } from '../support/system-binary'

const ESPEAK = systemBinary('espeak-ng', 'apt-get install espeak-ng')
const RATE = 16_000

/** espeak-ng saying `text` at `rate`. */
function say(text: string, rate: number): Int16Array {
  const wav = spawnSync(ESPEAK.path!, ['--stdout', '-v', 'en-us', '--', text]).stdout
  return resample(new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.byteLength - (wav.byteLength % 2))), 22_050, rate)
}

/**
 * Half a second of silence, a sentence, 1.5 s of silence (the model's state starts again inside
 * it), the sentence again, half a second of silence: at Silero's own rate (no resampling between pushes).
 */
function speech(): Int16Array {
  const voice = say('Sorry, can I ask something?', RATE)
  const out = new Int16Array(RATE * 2.5 + voice.length * 2)
  out.set(voice, RATE / 2)
  out.set(voice, RATE * 2 + voice.length)
  return out
}

/** Windows the VAD called speech. */
const speechWindows = (ws: VadWindow[]) => ws.filter((w) => w.speech).length

async function framewise(vad: { push(pcm: Int16Array, rate: number): Promise<VadWindow[]> }, audio: Int16Array, frame: number): Promise<{ speech: boolean; end: number }[]> {
  const out: { speech: boolean; end: number }[] = []
  for (let at = 0; at < audio.length; at += frame) {
    for (const w of await vad.push(audio.subarray(at, at + frame), RATE)) out.push({ speech: w.speech, end: at + w.end })
  }
  return out
}

describeNeeding(ESPEAK)('voice activity, pushed late in one piece', () => {
  test('Silero: the same decisions as frame by frame, each window ending where it does', async () => {
    const model = await loadSilero()
    expect(model).not.toBeNull()
    const audio = speech()
    // 20 ms frames: a window (512 samples) ends inside the frame that completes it.
    const live = await framewise(new SileroVad(model!), audio, 320)
    const late = (await new SileroVad(model!).push(audio, RATE)).map((w) => ({ speech: w.speech, end: w.end }))
    expect(late).toEqual(live)
    expect(late.map((w) => w.end)).toEqual(Array.from({ length: Math.floor(audio.length / 512) }, (_, i) => (i + 1) * 512))
    expect(late.some((w) => w.speech)).toBe(true)
    expect(late[0]!.speech).toBe(false)
  })

  test('Silero: two calls catching up in one batch each keep their own state', async () => {
    const model = await loadSilero()
    const audio = speech()
    const alone = (await new SileroVad(model!).push(audio, RATE)).map((w) => w.speech)
    const shorter = audio.subarray(0, RATE / 2 + 4_000)
    const [a, b] = await Promise.all([new SileroVad(model!).push(audio, RATE), new SileroVad(model!).push(shorter, RATE)])
    expect(a.map((w) => w.speech)).toEqual(alone)
    expect(b.map((w) => w.speech)).toEqual(alone.slice(0, b.length))
  })

  test('Silero hears a caller a minute into a call as well as at its start', async () => {
    // A phone call's audio: mu-law at 8 kHz, pushed 200 ms at a time (grouping changes nothing: above).
    const heard = async (vad: SileroVad, pcm: Int16Array) => {
      const out: VadWindow[] = []
      for (let at = 0; at < pcm.length; at += 1_600) out.push(...(await vad.push(decodeMulaw(encodeMulaw(pcm.subarray(at, at + 1_600))), PHONE_RATE)))
      return out
    }
    const question = say('Where do customers park?', PHONE_RATE)
    const thanks = say('Thank you.', PHONE_RATE)
    const quiet = new Int16Array(PHONE_RATE * 10 - question.length)
    const model = await loadSilero()
    const fresh = speechWindows(await heard(new SileroVad(model!), thanks))
    // A minute of a call: a question, then silence while the agent answers, six times over.
    const vad = new SileroVad(model!)
    for (let i = 0; i < 6; i++) {
      await heard(vad, question)
      await heard(vad, quiet)
    }
    const late = speechWindows(await heard(vad, thanks))
    expect(fresh).toBeGreaterThan(10)
    expect(late).toBeGreaterThanOrEqual(fresh - 2)
  })

  test('energy: windows end where their 20 ms end, whatever was carried from the last push', async () => {
    const vad = new EnergyVad()
    expect((await vad.push(new Int16Array(100), 8_000)).map((w) => w.end)).toEqual([])
    expect((await vad.push(new Int16Array(400), 8_000)).map((w) => w.end)).toEqual([60, 220, 380])
  })
})

test('Silero at the line’s rate: the model is given the same samples however the frames were grouped', async () => {
  // The model's input, captured: a busy host pushes several 20 ms frames at once, a quiet one each alone.
  const fed = (inputs: Float32Array[]) => ({
    batcher: {
      infer: async (input: Float32Array) => {
        inputs.push(input.slice())
        return new Array(input.length / INPUT).fill(0.9)
      },
    },
  })
  const line = new Int16Array(8_000)
  for (let i = 0; i < line.length; i++) line[i] = Math.round(8_000 * Math.sin(i / 3) + 3_000 * Math.sin(i / 17))
  const alone: Float32Array[] = []
  const vad = new SileroVad(fed(alone) as never) // a stand-in batcher: the VAD calls only its infer
  for (let at = 0; at < line.length; at += 160) await vad.push(line.subarray(at, at + 160), 8_000)
  const grouped: Float32Array[] = []
  const late = new SileroVad(fed(grouped) as never) // a stand-in batcher, as above
  for (let at = 0; at < line.length; at += 160 * 7) await late.push(line.subarray(at, Math.min(line.length, at + 160 * 7)), 8_000)
  const flat = (xs: Float32Array[]) => Array.from(xs.flatMap((x) => Array.from(x)))
  expect(flat(grouped)).toEqual(flat(alone))
})
