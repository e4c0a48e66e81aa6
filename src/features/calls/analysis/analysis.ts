/**
 * Post-call analysis (docs/spec.md Call `summary` and `fields`, Events rule 7): one language-model
 * pass for the summary and one for the fields, each only when wanted. The `local` model has no
 * language understanding worth a summary, so it gets the offline readers in local-summary.ts
 * and local-analysis.ts, which state only what the transcript says.
 */
import { complete, type LanguageModel, type ToolSpec, type Usage } from '../../../providers/llm'
import type { AnalysisRequest, AnalysisResult, TranscriptLine } from './analysis-types'
import { type FieldSpec, type FieldValue, typedFields } from './field-values'
import { localFields } from './local-analysis'
import { localSummary } from './local-summary'

export type { AnalysisRequest, AnalysisResult, TranscriptLine } from './analysis-types'

/** Two or three sentences (docs/spec.md): a summary the model made longer is cut at the third. */
const SUMMARY_MAX_SENTENCES = 3
/** A summary of two or three sentences fits well inside this; it bounds a model that rambles. */
const SUMMARY_MAX_TOKENS = 200
/** 30 fields (docs/spec.md collectFields limit) with short values fit; JSON arguments are terse. */
const FIELDS_MAX_TOKENS = 800
/** Analysis is not on anyone's critical path, but a stalled vendor must not hold the call's actor forever. */
const PASS_TIMEOUT_MS = 60_000

const RECORD_FIELDS = 'record_fields'

/** The transcript as the model reads it: who said what, in order, team notes included as spoken lines. */
export function renderTranscript(lines: TranscriptLine[]): string {
  return lines.map((l) => `${l.speaker === 'agent' ? 'Agent' : l.speaker === 'customer' ? 'Customer' : 'Team member'}: ${l.text}`).join('\n')
}

/** At most SUMMARY_MAX_SENTENCES sentences, whitespace folded. */
export function trimSummary(text: string): string | null {
  const folded = text.replace(/\s+/g, ' ').trim()
  if (!folded) return null
  const sentences = folded.match(/[^.!?]+[.!?]+(?:["')\]]+)?|[^.!?]+$/g) ?? [folded]
  return sentences.slice(0, SUMMARY_MAX_SENTENCES).join(' ').replace(/\s+/g, ' ').trim()
}

const spoke = (lines: TranscriptLine[]) => lines.some((l) => l.text.trim().length > 0)

export async function analyseCall(model: LanguageModel, req: AnalysisRequest): Promise<AnalysisResult> {
  const result: AnalysisResult = { summary: null, fields: {}, passes: [] }
  // "null when summaries are off for the call or nobody spoke"; fields need a customer who spoke.
  if (!spoke(req.transcript)) return result
  const customerSpoke = spoke(req.transcript.filter((l) => l.speaker === 'customer'))
  const local = model.provider === 'local'
  if (req.summarise) {
    if (local) result.summary = localSummary(req)
    else {
      const pass = await summaryPass(model, req)
      result.summary = pass.summary
      result.passes.push({ kind: 'summary', usage: pass.usage })
    }
  }
  if (req.fields.length > 0 && customerSpoke) {
    if (local) result.fields = localFields(req.fields, req.transcript)
    else {
      const pass = await fieldsPass(model, req)
      result.fields = pass.fields
      result.passes.push({ kind: 'fields', usage: pass.usage })
    }
  }
  return result
}

async function summaryPass(model: LanguageModel, req: AnalysisRequest): Promise<{ summary: string | null; usage: Usage | null }> {
  const about = req.purpose ? ` The agent called to: ${req.purpose}.` : ''
  const done = await complete(model, {
    messages: [
      {
        role: 'system',
        content:
          `You summarise phone calls between an AI agent named ${req.agentName} and a customer (${req.direction} call).${about} ` +
          'Write two or three plain sentences: why the call happened, what the customer said or wanted, and how it ended. ' +
          'State only what the transcript says; never invent names, numbers or promises.',
      },
      { role: 'user', content: renderTranscript(req.transcript) },
    ],
    temperature: 0,
    maxTokens: SUMMARY_MAX_TOKENS,
    timeoutMs: PASS_TIMEOUT_MS,
    signal: req.signal,
  })
  return { summary: trimSummary(done.text), usage: done.usage ?? null }
}

/** One JSON-schema property per field, so the vendor's tool calling types the answer. */
function fieldsTool(fields: FieldSpec[]): ToolSpec {
  const properties: Record<string, Record<string, unknown>> = {}
  for (const f of fields) {
    const type = f.type === 'number' ? 'number' : f.type === 'boolean' ? 'boolean' : 'string'
    const prop: Record<string, unknown> = { type }
    const about = [f.description, f.type === 'date' ? 'a date as YYYY-MM-DD' : null].filter(Boolean).join('; ')
    if (about) prop.description = about
    if (f.choices?.length) prop.enum = f.type === 'number' ? f.choices.map(Number).filter(Number.isFinite) : f.choices
    properties[f.name] = prop
  }
  return {
    name: RECORD_FIELDS,
    description: 'Record the details the customer actually gave during the call. Leave out every detail the customer did not state.',
    parameters: { type: 'object', properties, additionalProperties: false },
  }
}

async function fieldsPass(model: LanguageModel, req: AnalysisRequest): Promise<{ fields: Record<string, FieldValue>; usage: Usage | null }> {
  const done = await complete(model, {
    messages: [
      {
        role: 'system',
        content:
          `Read this phone call transcript and call ${RECORD_FIELDS} once with the details the customer stated. ` +
          'Omit any detail the customer did not clearly give: no guesses, no placeholders such as "unknown".',
      },
      { role: 'user', content: renderTranscript(req.transcript) },
    ],
    tools: [fieldsTool(req.fields)],
    temperature: 0,
    maxTokens: FIELDS_MAX_TOKENS,
    timeoutMs: PASS_TIMEOUT_MS,
    signal: req.signal,
  })
  const call = done.toolCalls.find((c) => c.name === RECORD_FIELDS)
  return { fields: call ? typedFields(req.fields, call.arguments) : {}, usage: done.usage ?? null }
}
