/**
 * Debian's libpocketsphinx (package `libpocketsphinx3`, 0.8+5prealpha: the 5prealpha API, where
 * `ps_start_utt` and `ps_get_hyp` take no utterance id) and its model (`pocketsphinx-en-us`),
 * reached through `bun:ffi`. One `Decoder` decodes one call's audio, utterance after utterance.
 * The calls are synchronous C: the live engine runs them on a worker (pocketsphinx-live.ts).
 */

import { CString, dlopen, FFIType, type Pointer, ptr } from 'bun:ffi'
import { existsSync } from 'node:fs'

export interface SphinxPaths {
  /** The decoder library (soname or path). */
  library: string
  /** sphinxbase, which holds the configuration and logging calls. */
  baseLibrary: string
  /** The `pocketsphinx-en-us` model directory. */
  modelDir: string
}

export const DEBIAN_SPHINX: SphinxPaths = {
  library: 'libpocketsphinx.so.3',
  baseLibrary: 'libsphinxbase.so.3',
  modelDir: '/usr/share/pocketsphinx/model/en-us',
}

export const SPHINX_INSTALL = 'apt-get install libpocketsphinx3 pocketsphinx-en-us'

/**
 * Decoder settings beyond the model's own. The second passes (`fwdflat`, `bestpath`) rescore the
 * whole utterance inside `ps_end_utt`, which then costs ~100 ms for a 2 s sentence here
 * (bench/wer.ts measures it) — the delay the live decoder exists to remove — so the final text is
 * the first pass's hypothesis, the same search the partials come from.
 */
export const FIRST_PASS_ONLY = ['-fwdflat', 'no', '-bestpath', 'no']

/**
 * A narrower first pass than the library's defaults (beam 1e-48, wbeam 7e-29, maxhmmpf 30000, no
 * cap on words a frame): at most 3,000 HMMs and 5 word exits a frame, beams of 1e-40 / 1e-25. On
 * phone-line audio (the soak's and bench:wer's sentences, 136 words, rounds alternated) it costs
 * ~1.3–2.2 ms per 20 ms frame against 5.6–6.8 ms with the defaults, at a word error rate of 80–84%
 * against 79–82% (the spread is the decoder's running cepstral mean; docs/benchmarks.md). The
 * words hardly steer the call (turns are not judged by them), and the decoder's CPU is most of the
 * service's on the default engines, so the cheaper search is the better trade.
 */
export const FAST_SEARCH = ['-maxhmmpf', '3000', '-maxwpf', '5', '-beam', '1e-40', '-pbeam', '1e-40', '-wbeam', '1e-25']

/** What the live decoder runs with. */
export const LIVE_SEARCH = [...FIRST_PASS_ONLY, ...FAST_SEARCH]

function libraries(paths: SphinxPaths) {
  const base = dlopen(paths.baseLibrary, {
    err_set_logfp: { args: [FFIType.ptr], returns: FFIType.void },
    cmd_ln_parse_r: { args: [FFIType.ptr, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.ptr },
    cmd_ln_free_r: { args: [FFIType.ptr], returns: FFIType.i32 },
  })
  const ps = dlopen(paths.library, {
    ps_args: { args: [], returns: FFIType.ptr },
    ps_init: { args: [FFIType.ptr], returns: FFIType.ptr },
    ps_start_utt: { args: [FFIType.ptr], returns: FFIType.i32 },
    ps_process_raw: { args: [FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    ps_get_hyp: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.ptr },
    ps_end_utt: { args: [FFIType.ptr], returns: FFIType.i32 },
    ps_free: { args: [FFIType.ptr], returns: FFIType.i32 },
  })
  // The library logs every setting and every utterance to stderr; a NULL stream silences it.
  base.symbols.err_set_logfp(null)
  return { base: base.symbols, ps: ps.symbols }
}

type Libraries = ReturnType<typeof libraries>
const loaded = new Map<string, Libraries>()

/** Loads the libraries once per thread; throws an Error naming what is missing and how to install it. */
export function loadSphinx(paths: SphinxPaths = DEBIAN_SPHINX): Libraries {
  const key = `${paths.library}|${paths.baseLibrary}`
  const hit = loaded.get(key)
  if (hit) return hit
  let libs: Libraries
  try {
    libs = libraries(paths)
  } catch (err) {
    throw new Error(`cannot load ${paths.library} (${(err as Error).message}); install it: ${SPHINX_INSTALL}`)
  }
  loaded.set(key, libs)
  return libs
}

export const MODEL_FILES = (dir: string) => ({ hmm: `${dir}/en-us`, lm: `${dir}/en-us.lm.bin`, dict: `${dir}/cmudict-en-us.dict` })

/** Null when the libraries load and the model is there; else why not (for the engine choice and the tests). */
export function sphinxMissing(paths: SphinxPaths = DEBIAN_SPHINX): string | null {
  try {
    loadSphinx(paths)
  } catch (err) {
    return (err as Error).message
  }
  const absent = Object.values(MODEL_FILES(paths.modelDir)).find((f) => !existsSync(f))
  return absent ? `the pocketsphinx model is missing (${absent}); install it: ${SPHINX_INSTALL}` : null
}

export class Decoder {
  private readonly libs: Libraries
  private config: Pointer | null
  private ps: Pointer | null
  private readonly score = new Int32Array(1)
  private inUtterance = false

  /** Loads the acoustic model, the language model and the dictionary: 200–600 ms and ~95 MB here. `search`: extra decoder arguments. */
  constructor(paths: SphinxPaths = DEBIAN_SPHINX, search: string[] = LIVE_SEARCH) {
    this.libs = loadSphinx(paths)
    const m = MODEL_FILES(paths.modelDir)
    // argv[0] is a program name the parser skips, as in a main().
    const args = ['pocketsphinx', '-hmm', m.hmm, '-lm', m.lm, '-dict', m.dict, ...search]
    const strings = args.map((a) => Buffer.from(`${a}\0`))
    const argv = new BigUint64Array(strings.map((s) => BigInt(ptr(s))))
    this.config = this.libs.base.cmd_ln_parse_r(null, this.libs.ps.ps_args(), args.length, argv, 1) as Pointer | null
    if (!this.config) throw new Error('pocketsphinx refused its configuration')
    this.ps = this.libs.ps.ps_init(this.config) as Pointer | null
    if (!this.ps) {
      this.libs.base.cmd_ln_free_r(this.config)
      this.config = null
      throw new Error(`pocketsphinx could not load its model from ${paths.modelDir}; install it: ${SPHINX_INSTALL}`)
    }
  }

  /** Decodes `pcm` (16 kHz) into the current utterance, starting one if none is open. */
  process(pcm: Int16Array): void {
    const ps = this.live()
    if (!pcm.length) return
    if (!this.inUtterance) {
      if (this.libs.ps.ps_start_utt(ps) < 0) throw new Error('ps_start_utt failed')
      this.inUtterance = true
    }
    if (this.libs.ps.ps_process_raw(ps, pcm, pcm.length, 0, 0) < 0) throw new Error('ps_process_raw failed')
  }

  /** The current utterance's best hypothesis so far ('' before any word). */
  hypothesis(): string {
    if (!this.inUtterance) return ''
    return this.hyp()
  }

  /** Ends the current utterance and returns its text ('' when none was open or nothing was heard). */
  finish(): string {
    const ps = this.live()
    if (!this.inUtterance) return ''
    this.inUtterance = false
    if (this.libs.ps.ps_end_utt(ps) < 0) throw new Error('ps_end_utt failed')
    return this.hyp()
  }

  free(): void {
    if (this.ps) this.libs.ps.ps_free(this.ps)
    if (this.config) this.libs.base.cmd_ln_free_r(this.config)
    this.ps = null
    this.config = null
  }

  get freed(): boolean {
    return !this.ps
  }

  private hyp(): string {
    const h = this.libs.ps.ps_get_hyp(this.live(), this.score)
    return h ? new CString(h).toString().trim() : ''
  }

  private live(): Pointer {
    if (!this.ps) throw new Error('the decoder was freed')
    return this.ps
  }
}
