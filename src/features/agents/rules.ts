/** Agent rules a schema cannot say: clamping, catalogues, uniqueness, plan model choice. */

import { findModel, MODELS } from '../../catalog/models'
import { type PlanId, planIncludes } from '../../catalog/plans'
import { isVoice, VOICES } from '../../catalog/voices'
import { invalid } from '../../refusals'
import { normalizePhone, unreadablePhone } from '../contacts/public'
import { canonicalLanguage } from './languages'
import type { Agent, CreateAgent } from './model'

/** docs/spec.md Agent: temperature 0–2 and maxReplyTokens 100–800, "values outside are clamped". */
export const clampTemperature = (v: number): number => Math.min(2, Math.max(0, Math.round(v * 100) / 100))
export const clampReplyTokens = (v: number): number => Math.min(800, Math.max(100, Math.round(v)))

export function checkLanguage(value: string, field: string, allowAuto: boolean): string {
  if (allowAuto && value.trim().toLowerCase() === 'auto') return 'auto'
  const canonical = canonicalLanguage(value)
  if (!canonical) throw invalid(field, `"${value}" is not a language the console offers${allowAuto ? ' (or auto)' : ''}`)
  return canonical
}

export function checkVoice(id: string): string {
  if (!isVoice(id)) throw invalid('voice.voice', `"${id}" is not a voice; choose one of ${VOICES.map((v) => v.id).join(', ')} (GET /voices)`)
  return id
}

/**
 * A model the plan does not include, or one too slow for calls on an agent that answers calls,
 * is refused only when changing to it (docs/spec.md Agent `model`): an agent keeps working after a
 * downgrade.
 */
export function checkModelChange(id: string, plan: PlanId, answersCalls: boolean): string {
  const model = findModel(id)
  if (!model) throw invalid('model', `"${id}" is not a model; choose one of ${MODELS.map((m) => m.id).join(', ')} (GET /models)`)
  if (!planIncludes(plan, model.minPlan)) {
    throw invalid('model', `${id} needs the ${model.minPlan} plan or above; this workspace is on ${plan}`)
  }
  if (answersCalls && !model.voice) {
    throw invalid('model', `${id} is too slow for phone calls; pick a model marked voice: true, or turn voice.answersCalls off`)
  }
  return id
}

export function checkCollectFieldNames(fields: { name: string }[]): void {
  const seen = new Set<string>()
  fields.forEach((f, i) => {
    const key = f.name.trim().toLowerCase()
    if (seen.has(key)) throw invalid(`collectFields[${i}].name`, `"${f.name}" appears twice`)
    seen.add(key)
  })
}

/**
 * Transfer destinations: names unique (case-insensitive: the model and the API name a destination
 * by it), each number read like any other (E.164, libphonenumber-js), `mode` cold by default.
 */
export function checkTransfers(input: NonNullable<CreateAgent['transfers']>): Agent['transfers'] {
  const seen = new Set<string>()
  return input.map((d, i) => {
    const name = d.name.replace(/\s+/g, ' ').trim()
    if (!name) throw invalid(`transfers[${i}].name`, 'must not be blank')
    const key = name.toLowerCase()
    if (seen.has(key)) throw invalid(`transfers[${i}].name`, `"${name}" appears twice`)
    seen.add(key)
    const phoneNumber = normalizePhone(d.phoneNumber)
    if (!phoneNumber) throw invalid(`transfers[${i}].phoneNumber`, unreadablePhone(d.phoneNumber))
    const whenToUse = d.whenToUse.trim()
    if (!whenToUse) throw invalid(`transfers[${i}].whenToUse`, 'must not be blank')
    return { name, phoneNumber, whenToUse, mode: d.mode ?? 'cold' }
  })
}
