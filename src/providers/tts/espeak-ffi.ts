/**
 * libespeak-ng in-process (Debian package `libespeak-ng1`, which `espeak-ng` depends on) through
 * `bun:ffi`: the same synthesiser as the `espeak-ng` program, without a process per sentence
 * (~45 ms of CPU to start one against ~3 ms to speak a sentence: bench/espeak.ts). The calls are
 * synchronous C and the library keeps its state in globals, so one copy of the library serves one
 * thread: each synthesiser thread (espeak-worker.ts) maps its own copy (`privateCopy`).
 *
 * Synchronous mode, as `espeak-ng --stdout` runs it: `espeak_Synth` returns once the text is
 * spoken, handing the samples to the callback as it goes (22,050 Hz mono 16-bit).
 */
import { dlopen, FFIType, JSCallback, type Pointer, ptr, toArrayBuffer } from 'bun:ffi'
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Its soname: Debian puts it in /usr/lib/<arch>/ (`resolveSoname` finds the file to copy). */
export const ESPEAK_LIBRARY = 'libespeak-ng.so.1'
export const ESPEAK_INSTALL = 'apt-get install libespeak-ng1 (it comes with espeak-ng)'

/** speak_lib.h: espeak_AUDIO_OUTPUT, espeak_PARAMETER, the synth flags and the init options. */
const AUDIO_OUTPUT_SYNCHRONOUS = 2
const espeakRATE = 1
const POS_CHARACTER = 1
const espeakCHARS_AUTO = 0
const espeakPHONEMES = 0x100
const espeakENDPAUSE = 0x1000
/** Without it the library calls exit() when its data is missing. */
const espeakINITIALIZE_DONT_EXIT = 0x8000
/** The flags the `espeak-ng` program speaks its text with (its espeak-ng.c), so the samples match it. */
const SYNTH_FLAGS = espeakCHARS_AUTO | espeakPHONEMES | espeakENDPAUSE

const SYMBOLS = {
  espeak_Initialize: { args: [FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  espeak_SetSynthCallback: { args: [FFIType.ptr], returns: FFIType.void },
  espeak_SetVoiceByName: { args: [FFIType.ptr], returns: FFIType.i32 },
  espeak_SetVoiceByProperties: { args: [FFIType.ptr], returns: FFIType.i32 },
  espeak_SetParameter: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  espeak_Synth: { args: [FFIType.ptr, FFIType.u64, FFIType.u32, FFIType.i32, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  espeak_Terminate: { args: [], returns: FFIType.i32 },
} as const

/** Null when the library is there; else why not (the engine falls back to the program). */
export function espeakLibraryMissing(library = ESPEAK_LIBRARY): string | null {
  if (library.includes('/') && !existsSync(library)) return `${library} is not installed; ${ESPEAK_INSTALL}`
  try {
    dlopen(library, { espeak_Initialize: SYMBOLS.espeak_Initialize }).close()
    if (!library.includes('/')) resolveSoname(library)
    return null
  } catch (err) {
    return `cannot load ${library} (${(err as Error).message}); ${ESPEAK_INSTALL}`
  }
}

/**
 * A copy of the library file of this thread's own: the dynamic loader maps one path once per
 * process, so two threads opening the same file would share (and corrupt) its globals. The copy is
 * deleted once mapped.
 */
function privateCopy(library: string): { path: string; done(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'espeak-ng-'))
  const path = join(dir, 'libespeak-ng.so')
  copyFileSync(library, path)
  return { path, done: () => rmSync(dir, { recursive: true, force: true }) }
}

export class EspeakLibrary {
  private readonly lib: ReturnType<typeof dlopen<typeof SYMBOLS>>
  private readonly callback: JSCallback
  readonly sampleRate: number
  /** Where the callback sends the samples of the sentence being spoken. */
  private sink: ((pcm: Int16Array) => void) | null = null
  private voice = ''

  /** Loads a private copy of `library` and initialises it (~10 ms: its phoneme data and the default voice). */
  constructor(library = ESPEAK_LIBRARY) {
    const copy = privateCopy(library.includes('/') ? library : resolveSoname(library))
    try {
      this.lib = dlopen(copy.path, SYMBOLS)
    } finally {
      copy.done()
    }
    const rate = this.lib.symbols.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, null, espeakINITIALIZE_DONT_EXIT)
    if (rate <= 0) throw new Error(`espeak-ng could not initialise (${rate}); ${ESPEAK_INSTALL}`)
    this.sampleRate = rate
    // int callback(short *wav, int numsamples, espeak_EVENT *events): 0 goes on.
    this.callback = new JSCallback(
      (wav: Pointer | null, samples: number) => {
        if (wav && samples > 0) this.sink?.(new Int16Array(toArrayBuffer(wav, 0, samples * 2).slice(0)))
        return 0
      },
      { args: [FFIType.ptr, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    )
    this.lib.symbols.espeak_SetSynthCallback(this.callback.ptr)
  }

  /** Speaks `text` in `voice` (an espeak-ng voice name, `en-us+f3`) at `wpm`, handing the samples to `sink` as they come; returns when done. */
  speak(text: string, voice: string, wpm: number, sink: (pcm: Int16Array) => void): void {
    if (voice !== this.voice) {
      if (!this.selectVoice(voice)) throw new Error(`espeak-ng has no voice "${voice}"`)
      this.voice = voice
    }
    // Set every time: cheap, and a voice's own settings may have changed it.
    this.lib.symbols.espeak_SetParameter(espeakRATE, wpm, 0)
    const bytes = Buffer.from(`${text}\0`)
    // The voice's jitter comes from libc's rand(); the program starts each sentence at the seed a
    // new process has (1), so this gives the same samples as the program for the same sentence.
    libc().srand(1)
    this.sink = sink
    try {
      const err = this.lib.symbols.espeak_Synth(bytes, bytes.length, 0, POS_CHARACTER, 0, SYNTH_FLAGS, null, null)
      if (err !== 0) throw new Error(`espeak_Synth failed (${err})`)
    } finally {
      this.sink = null
    }
  }

  /**
   * As the program does: a voice by its name or file (`en-us`), else by language (`en-gb`, which
   * names no voice file), either with a `+variant`.
   */
  private selectVoice(voice: string): boolean {
    const name = Buffer.from(`${voice}\0`)
    if (this.lib.symbols.espeak_SetVoiceByName(name) === 0) return true
    // espeak_VOICE: name, languages, identifier (pointers), gender, age, variant, xx1, score, spare.
    const selector = new BigUint64Array(5)
    selector[1] = BigInt(ptr(name))
    return this.lib.symbols.espeak_SetVoiceByProperties(selector) === 0
  }

  close(): void {
    this.lib.symbols.espeak_Terminate()
    this.callback.close()
    this.lib.close()
  }
}

let libcSymbols: { srand(seed: number): void } | null = null
const libc = () => (libcSymbols ??= dlopen('libc.so.6', { srand: { args: [FFIType.u32], returns: FFIType.void } }).symbols)

/** A soname (`libespeak-ng.so.1`) as the file the loader finds, for the copy. */
function resolveSoname(soname: string): string {
  for (const dir of ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/usr/local/lib']) {
    const path = join(dir, soname)
    if (existsSync(path)) return path
  }
  throw new Error(`cannot find ${soname}; ${ESPEAK_INSTALL}`)
}
