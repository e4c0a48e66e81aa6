/**
 * A persona caller (docs/api/simulations.md "Persona callers"): a vendor model plays the caller of
 * a scenario — who they are (`persona`) and what they want done (`goal`) — writing the caller's
 * next line from the conversation so far, one line per turn. It hangs up by ending a line with
 * HANG_UP (the goal is met, or it cannot get further), or once it has said `maxTurns` lines.
 * A model that fails or is too slow throws a PersonaError: the scenario's result fails with it,
 * never a pass on a caller who said nothing.
 */
import { complete, type LanguageModel } from '../../providers/llm'
import { PERSONA_TURNS_DEFAULT } from './model'

/** What the model writes to hang up: the caller's "goodbye" before it is still said. */
export const HANG_UP = '[hang up]'
/** Same request, same sampling as far as the vendor allows: the least variation a model gives. */
export const PERSONA_TEMPERATURE = 0
/**
 * The longest caller line is a scripted line's 300 characters (model.ts CallerLine.say), ~75
 * tokens of English at ~4 characters a token; 120 leaves room for the hang-up marker and a little
 * preamble a model adds, and bounds one that rambles.
 */
export const PERSONA_MAX_TOKENS = 120
/**
 * How long one line may take: a hosted model's short answer streams in 1-3 s (the warm brief's
 * 4 s deadline in calls/control/brief-writer.ts is for a person waiting); a simulation has no one waiting,
 * so five times that slow case absorbs a vendor's busy minute before the scenario fails.
 */
export const PERSONA_TIMEOUT_MS = 20_000
/** What a line may hold when said: a scripted line's bound (model.ts CallerLine.say). */
const LINE_CHARS_MAX = 300

export interface PersonaSpec {
  persona: string
  goal: string
  maxTurns?: number
  opening?: string
}

export interface HeardLine {
  speaker: string
  text: string
}

export class PersonaError extends Error {
  override readonly name = 'PersonaError'
}

export class PersonaCaller {
  private said = 0
  private hungUp = false

  constructor(
    private readonly model: LanguageModel,
    private readonly spec: PersonaSpec,
    /** The run's seed: the same run asks for the same sampling (vendors that take a seed). */
    private readonly seed: number,
    private readonly timeoutMs = PERSONA_TIMEOUT_MS,
  ) {}

  /** The model that plays the caller, as named in errors and docs: `openai gpt-4o-mini`. */
  get playedBy(): string {
    return `${this.model.provider} ${this.model.id}`
  }

  /**
   * The caller's next line given the conversation so far (`agent` lines are the agent's, the rest
   * the caller's), or null when the caller hangs up. Throws PersonaError when the model fails.
   */
  async next(transcript: HeardLine[], signal?: AbortSignal): Promise<string | null> {
    if (this.hungUp || this.said >= (this.spec.maxTurns ?? PERSONA_TURNS_DEFAULT)) return null
    if (this.said === 0 && this.spec.opening) return this.say(this.spec.opening.trim())
    const deadline = AbortSignal.timeout(this.timeoutMs)
    let text: string
    try {
      const done = await complete(this.model, {
        messages: [
          { role: 'system', content: instructions(this.spec) },
          { role: 'user', content: conversation(transcript) },
        ],
        temperature: PERSONA_TEMPERATURE,
        seed: this.seed,
        maxTokens: PERSONA_MAX_TOKENS,
        timeoutMs: this.timeoutMs,
        signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
      })
      text = done.text
    } catch (err) {
      if (signal?.aborted) throw err
      const why = deadline.aborted ? `took longer than ${this.timeoutMs} ms` : `failed: ${err instanceof Error ? err.message : String(err)}`
      throw new PersonaError(`the caller’s model (${this.playedBy}) ${why}`)
    }
    const { line, hangUp } = readLine(text)
    if (hangUp) this.hungUp = true
    if (line) return this.say(line)
    if (hangUp) return null
    throw new PersonaError(`the caller’s model (${this.playedBy}) wrote no line`)
  }

  private say(line: string): string {
    this.said++
    return line
  }
}

function instructions(spec: PersonaSpec): string {
  return (
    'You are playing a customer who contacts a business, to test its AI agent. Stay in character; never say you are an AI or a test.\n' +
    `Who you are: ${spec.persona.trim()}\n` +
    `What you want done: ${spec.goal.trim()}\n` +
    'Write only your next line: one or two short sentences, as said aloud, no stage directions, names of speakers, lists or markup. ' +
    `Once what you want is done, or the agent clearly cannot do it, say goodbye and end that line with ${HANG_UP}.`
  )
}

/** The conversation as the caller has lived it, in one message (both vendors take it the same way). */
function conversation(transcript: HeardLine[]): string {
  const lines = transcript.filter((l) => l.text.trim()).map((l) => `${l.speaker === 'agent' ? 'Agent' : 'You'}: ${l.text.trim()}`)
  if (lines.length === 0) return 'The conversation has just opened; nothing has been said yet. Write your first line.'
  return `The conversation so far:\n${lines.join('\n')}\n\nWrite your next line.`
}

/** The model's words as one caller line: the hang-up marker taken off, speaker labels, wrapping quotes and markup dropped. */
export function readLine(text: string): { line: string | null; hangUp: boolean } {
  const at = text.toLowerCase().indexOf(HANG_UP)
  const hangUp = at >= 0
  const words = (hangUp ? text.slice(0, at) : text)
    .replace(/[*_#`>~]+/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^(?:you|caller|customer)\s*:\s*/i, '')
    .replace(/^["“](.*)["”]$/, '$1')
    .trim()
  if (!words) return { line: null, hangUp }
  return { line: words.length > LINE_CHARS_MAX ? `${words.slice(0, LINE_CHARS_MAX - 1).trimEnd()}…` : words, hangUp }
}
