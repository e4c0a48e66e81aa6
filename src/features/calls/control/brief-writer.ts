/**
 * A warm transfer's brief written by the agent's own model (docs/api/calls.md "Transfer"): the
 * fixed opening (who calls, who is waiting, for whom: never the model's words), then a sentence
 * or two the model writes from the transcript so far — what the caller wants and what was already
 * done. The `local` model has no understanding worth a summary: it gets warm-brief.ts's brief,
 * built from the caller's own words. So does a vendor that fails or is too slow: the person hears
 * a brief either way, never silence.
 */
import { complete, type LanguageModel } from '../../../providers/llm'
import { renderTranscript } from '../analysis/analysis'
import { type BriefInput, briefOpening, localBrief } from './warm-brief'

/**
 * How long the model may take before the template is used. Meanwhile the caller is still with the
 * agent and the person's phone does not ring yet. A hosted model's first words come in ~0.5-1.5 s
 * and two sentences stream in about one more; 4 s is twice that slow case, and past it a template
 * now serves the caller better than a better brief later.
 */
export const BRIEF_DEADLINE_MS = 4_000
/** Two spoken sentences are 30-60 words, ~80 tokens: this bounds a model that rambles. */
export const BRIEF_MAX_TOKENS = 120
/** What the model's part may hold: two sentences, ~10 s of speech, within the ~15 s a person listens. */
const BRIEF_MAX_SENTENCES = 2
/** The transcript the model reads: the latest lines; a long call's start matters less than why they want a person now. */
const BRIEF_TRANSCRIPT_LINES = 40

export interface WrittenBrief {
  text: string
  /** `model`: the model's summary; `local`: warm-brief.ts's, by choice (the local model) or as the fallback. */
  by: 'model' | 'local'
  /** Why the model's brief was not used (its error, or the deadline); null when it was, or not asked. */
  fallback: string | null
}

/**
 * The brief for `input`, by `model` when it is a vendor's (null: no model could be resolved).
 * `signal` aborts the model's request (the caller left); the deadline falls back to the template.
 */
export async function writeBrief(model: LanguageModel | null, input: BriefInput, opts: { signal?: AbortSignal; deadlineMs?: number } = {}): Promise<WrittenBrief> {
  if (!model || model.provider === 'local') return { text: localBrief(input), by: 'local', fallback: null }
  const deadlineMs = opts.deadlineMs ?? BRIEF_DEADLINE_MS
  const deadline = AbortSignal.timeout(deadlineMs)
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline
  try {
    const done = await complete(model, {
      messages: [
        {
          role: 'system',
          content:
            `You are ${input.agentName}, an AI phone agent. A caller is on hold while you call ${input.destination}, a person on your team, ` +
            `to hand the call over. ${input.destination} has just been told who is waiting. In one or two short sentences, tell them what ` +
            'the caller wants and what was already done on the call, from the transcript below. State only what the transcript says; never ' +
            'invent names, numbers or promises. No greeting and no names of who is waiting: plain words to be read aloud, no lists or markup.',
        },
        { role: 'user', content: renderTranscript(input.transcript.slice(-BRIEF_TRANSCRIPT_LINES)) || '(Nothing has been said yet.)' },
      ],
      temperature: 0,
      maxTokens: BRIEF_MAX_TOKENS,
      timeoutMs: deadlineMs,
      signal,
    })
    const summary = spokenSummary(done.text, done.finishReason === 'length')
    if (!summary) return { text: localBrief(input), by: 'local', fallback: 'the model wrote nothing' }
    return { text: `${briefOpening(input)} ${summary}`, by: 'model', fallback: null }
  } catch (err) {
    if (opts.signal?.aborted) throw err
    const why = deadline.aborted ? `the model took longer than ${deadlineMs} ms` : err instanceof Error ? err.message : String(err)
    return { text: localBrief(input), by: 'local', fallback: why }
  }
}

/**
 * The model's words as spoken: whitespace folded, markup and wrapping quotes dropped, at most
 * BRIEF_MAX_SENTENCES sentences; a sentence cut by the token bound is dropped when a whole one is left.
 */
export function spokenSummary(text: string, cut: boolean): string | null {
  const folded = text
    .replace(/[*_#`>]+/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^["“](.*)["”]$/, '$1')
    .trim()
  if (!folded) return null
  const sentences = folded.match(/[^.!?]+[.!?]+(?:["')\]]+)?|[^.!?]+$/g) ?? [folded]
  const whole = cut && sentences.length > 1 && !/[.!?]["')\]]*$/.test(sentences[sentences.length - 1]!) ? sentences.slice(0, -1) : sentences
  const kept = whole.slice(0, BRIEF_MAX_SENTENCES).join(' ').replace(/\s+/g, ' ').trim()
  return kept || null
}
