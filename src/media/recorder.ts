/**
 * Call recording: both sides mixed into one mono WAV. While the call runs, each side streams to a
 * raw file (so a 20-minute call costs disk, not memory); at the end they are mixed and written as
 * `<name>.wav` with `wavefile`. The caller's audio is the timeline (the line sends it without
 * gaps, silence included); the agent's is placed where it was sent on that timeline.
 */
import { createWriteStream, type WriteStream } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { WaveFile } from 'wavefile'
import { resample, toLittleEndian } from './codecs'

const RATE = 8_000

export class Recorder {
  private readonly caller: WriteStream
  private readonly agent: WriteStream
  private callerSamples = 0
  private agentSamples = 0
  private finished: Promise<string> | null = null

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
    this.agentSamples += line.length
    this.agent.write(toLittleEndian(line))
  }

  /** Mixes both sides into `<name>.wav`; resolves with its path. Idempotent. */
  finish(): Promise<string> {
    this.finished ??= (async () => {
      await Promise.all([end(this.caller), end(this.agent)])
      const rawCaller = join(this.dir, `${this.name}.caller.raw`)
      const rawAgent = join(this.dir, `${this.name}.agent.raw`)
      const a = samples(await readFile(rawCaller))
      const b = samples(await readFile(rawAgent))
      const mixed = new Int16Array(Math.max(a.length, b.length))
      for (let i = 0; i < mixed.length; i++) mixed[i] = Math.max(-32768, Math.min(32767, (a[i] ?? 0) + (b[i] ?? 0)))
      const wav = new WaveFile()
      wav.fromScratch(1, RATE, '16', mixed)
      const path = join(this.dir, `${this.name}.wav`)
      await writeFile(path, wav.toBuffer())
      await Promise.all([rm(rawCaller, { force: true }), rm(rawAgent, { force: true })])
      return path
    })()
    return this.finished
  }
}

const end = (s: WriteStream) => new Promise<void>((resolve) => s.end(() => resolve()))
const samples = (b: Buffer) => new Int16Array(b.buffer, b.byteOffset, b.byteLength >> 1)
