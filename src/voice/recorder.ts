/**
 * Call recording: both sides mixed into one mono WAV, and the caller's side alone beside it. While
 * the call runs, each side streams to a raw file (so a 20-minute call costs disk, not memory); at
 * the end they are mixed and written as `<name>.wav`, and the caller's side as `<name>.caller.wav`
 * (a call replayed as a simulation's caller plays it: docs/api/simulations.md), with `wavefile`.
 * The caller's audio is the timeline (the line sends it without gaps, silence included); the
 * agent's is placed where it was sent on that timeline. The recorder also keeps where on that
 * timeline each caller turn was written and where the agent's speech ran (`timeline`).
 */
import { createWriteStream, type WriteStream } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { WaveFile } from 'wavefile'
import { resample, toLittleEndian } from './codecs'

const RATE = 8_000
const MS = RATE / 1000
/** Agent audio this close after the last is one stretch of speech: shorter than the 900 ms pause a scripted caller takes for a turn's end (CALLEE_WAITS_MS). */
const SAME_SPEECH_GAP_MS = 300

/** Where on the recording's timeline (ms of the caller's audio) each caller turn was written, and the agent's speech ran. */
export interface RecordingTimeline {
  /** One per caller line of the transcript, in order: where the caller's audio stood when it was written. */
  turnEndsMs: number[]
  /** Each stretch of the agent's audio as sent: [from, to] ms. */
  agentMs: [number, number][]
}

export class Recorder {
  private readonly caller: WriteStream
  private readonly agent: WriteStream
  private callerSamples = 0
  private agentSamples = 0
  private finished: Promise<string> | null = null
  private readonly turnEnds: number[] = []
  private readonly agentSpans: [number, number][] = []

  constructor(
    private readonly dir: string,
    private readonly name: string,
  ) {
    this.caller = createWriteStream(join(dir, `${name}.caller.raw`))
    this.agent = createWriteStream(join(dir, `${name}.agent.raw`))
  }

  static async open(dir: string, name: string): Promise<Recorder> {
    await mkdir(dir, { recursive: true })
    return new Recorder(dir, name)
  }

  fromCaller(pcm: Int16Array, rate: number): void {
    const line = resample(pcm, rate, RATE)
    this.callerSamples += line.length
    this.caller.write(toLittleEndian(line))
  }

  fromAgent(pcm: Int16Array, rate: number): void {
    const line = resample(pcm, rate, RATE)
    // Silence up to where the caller's timeline is now: the agent spoke at this moment.
    if (this.agentSamples < this.callerSamples) {
      const gap = this.callerSamples - this.agentSamples
      this.agent.write(new Uint8Array(gap * 2))
      this.agentSamples += gap
    }
    const at = this.agentSamples / MS
    const last = this.agentSpans.at(-1)
    this.agentSamples += line.length
    this.agent.write(toLittleEndian(line))
    if (this.finished) return
    // A gap shorter than a breath is the same answer going on (its next sentence came a moment late).
    if (last && at - last[1] < SAME_SPEECH_GAP_MS) last[1] = this.agentSamples / MS
    else this.agentSpans.push([at, this.agentSamples / MS])
  }

  /** A caller line was written to the transcript: where the caller's audio stands now. */
  turnEnded(): void {
    if (!this.finished) this.turnEnds.push(this.callerSamples / MS)
  }

  /** The turns and the agent's speech on the recording's timeline, up to the recording's end. */
  timeline(): RecordingTimeline {
    return { turnEndsMs: [...this.turnEnds], agentMs: this.agentSpans.map(([a, b]) => [Math.round(a), Math.round(b)]) }
  }

  /** Mixes both sides into `<name>.wav` (the caller's alone into `<name>.caller.wav`, callerWav); resolves with the mix's path. Idempotent. */
  finish(): Promise<string> {
    this.finished ??= (async () => {
      await Promise.all([end(this.caller), end(this.agent)])
      return mix(this.dir, this.name)
    })()
    return this.finished
  }
}

/**
 * Finishes the recording a process left unfinished (it died mid-call): mixes what reached the raw
 * files into `<name>.wav` as `finish` would, and resolves with its path; null when no raw file of
 * that name is there (nothing was recorded here, or it was finished already).
 */
export async function finishLeftRecording(dir: string, name: string): Promise<string | null> {
  const sides = await Promise.all([raw(dir, name, 'caller'), raw(dir, name, 'agent')].map((p) => Bun.file(p).exists()))
  if (!sides.some(Boolean)) return null
  return mix(dir, name)
}

const raw = (dir: string, name: string, side: 'caller' | 'agent') => join(dir, `${name}.${side}.raw`)
/** The caller's side alone, written beside the mix. */
export const callerWav = (mixPath: string) => mixPath.replace(/\.wav$/, '.caller.wav')

async function mix(dir: string, name: string): Promise<string> {
  const rawCaller = raw(dir, name, 'caller')
  const rawAgent = raw(dir, name, 'agent')
  const a = samples(await readFile(rawCaller).catch(() => Buffer.alloc(0)))
  const b = samples(await readFile(rawAgent).catch(() => Buffer.alloc(0)))
  const mixed = new Int16Array(Math.max(a.length, b.length))
  for (let i = 0; i < mixed.length; i++) mixed[i] = Math.max(-32768, Math.min(32767, (a[i] ?? 0) + (b[i] ?? 0)))
  const path = join(dir, `${name}.wav`)
  await writeFile(path, wavOf(mixed))
  await writeFile(callerWav(path), wavOf(a))
  await Promise.all([rm(rawCaller, { force: true }), rm(rawAgent, { force: true })])
  return path
}

/** A mono 16-bit 8 kHz WAV of `pcm`. */
export function wavOf(pcm: Int16Array): Uint8Array {
  const wav = new WaveFile()
  wav.fromScratch(1, RATE, '16', pcm)
  return wav.toBuffer()
}

/** A mono 16-bit WAV's samples (as wavOf writes them). */
export function wavSamples(bytes: Uint8Array): Int16Array {
  const wav = new WaveFile(bytes)
  // cast: wavefile types getSamples loosely; a mono 16-bit file's are one Int16Array-like array of numbers.
  return Int16Array.from(wav.getSamples(false, Int16Array) as unknown as ArrayLike<number>)
}

const end = (s: WriteStream) => new Promise<void>((resolve) => s.end(() => resolve()))
/** Whole samples only: a process killed mid-write can leave half of the last one. */
function samples(b: Buffer): Int16Array {
  const whole = b.byteLength >> 1
  // Int16Array needs an even offset; a copy gives one where the buffer's is odd.
  return b.byteOffset % 2 === 0 ? new Int16Array(b.buffer, b.byteOffset, whole) : new Int16Array(new Uint8Array(b.subarray(0, whole * 2)).buffer)
}
