/**
 * The rules of placing a call that a schema cannot say (docs/spec.md Calls: body rules, call-placing
 * rules and Errors for POST calls): the number, the consent, the agent, the number it rings from,
 * and the optional members whose shapes are ours. Pure: the service loads the data, these decide.
 */

import { checkInstant } from '../../../instant'
import { clashes, invalid, notAllowed, notBlank, tooMany } from '../../../refusals'
import { normalizePhone, unreadablePhone } from '../../contacts/public'
import type { FieldSpec } from '../analysis/field-values'
import { type PlaceCall, SCHEDULE_MAX_DAYS, VARIABLE_NAME_MAX, VARIABLE_VALUE_MAX, VARIABLES_MAX } from '../model'
import type { MetadataValue } from '../records/repository'

const DAY_MS = 24 * 60 * 60 * 1000

/** An agent as placement sees it. */
export interface PhoneAgent {
  id: string
  name: string
  answersCalls: boolean
  phoneNumber: string | null
}

/** A number attached to an agent. */
export interface AgentNumber {
  number: string
  source: 'rented' | 'brought'
  carrierCredentials: boolean
}

export interface Consent {
  optedOut: boolean
  doNotCall: boolean
}

/** `to` in E.164, or a 400 naming it (docs/spec.md: "unreadable number"). */
export function callee(to: string): string {
  const phone = normalizePhone(to)
  if (!phone) throw invalid('to', unreadablePhone(to))
  return phone
}

/** docs/spec.md: the number must be a contact (403), and one who withdrew consent anywhere is refused (403). */
export function checkConsent(phone: string, contact: Consent | null): void {
  if (!contact) throw notAllowed(`${phone} is not a contact of this workspace; import it in the console first`)
  if (contact.optedOut) throw notAllowed(`${phone} has opted out; the call is not placed`)
  if (contact.doNotCall) throw notAllowed(`${phone} is on the do-not-call list; the call is not placed`)
}

/** How many phone agents the "several answer the phone" refusal names (the rest is "…"). */
export const PHONE_AGENTS_NAMED = 5

/** An agent answers the phone when its voice is on and a number is attached (docs/spec.md Errors: 409 "voice off or no number"). */
const onThePhone = (a: PhoneAgent) => a.answersCalls && a.phoneNumber !== null

/**
 * The agent that places the call: the one named (by id or name), or the only phone agent.
 * Several phone agents and none named → 400; none on the phone → 409.
 */
export function chooseAgent(agents: PhoneAgent[], requested: string | undefined): PhoneAgent {
  if (requested !== undefined) {
    const wanted = notBlank(requested, 'agent').trim()
    const agent = agents.find((a) => a.id === wanted) ?? agents.find((a) => a.name.toLowerCase() === wanted.toLowerCase())
    if (!agent) throw invalid('agent', `no agent "${wanted.slice(0, 60)}" in this workspace`)
    if (!onThePhone(agent)) {
      throw clashes(`agent ${agent.name} does not answer the phone: ${agent.answersCalls ? 'it has no phone number attached' : 'its voice is off (voice.answersCalls)'}`)
    }
    return agent
  }
  const phoneAgents = agents.filter(onThePhone)
  if (phoneAgents.length === 0) throw clashes('no agent answers the phone: turn voice on (voice.answersCalls) and attach a number in the console')
  if (phoneAgents.length > 1) {
    throw invalid(
      'agent',
      `several agents answer the phone (${phoneAgents
        .slice(0, PHONE_AGENTS_NAMED)
        .map((a) => a.name)
        .join(', ')}${phoneAgents.length > PHONE_AGENTS_NAMED ? ', …' : ''}); name one`,
    )
  }
  return phoneAgents[0]
}

/**
 * The number the call rings from: `from` when it is one of the agent's numbers, else the agent's
 * own. A brought number without carrier credentials cannot place calls (409).
 */
export function chooseFrom(agent: PhoneAgent, numbers: AgentNumber[], from: string | undefined): AgentNumber {
  let chosen: AgentNumber | undefined
  if (from !== undefined) {
    const wanted = normalizePhone(from)
    if (!wanted) throw invalid('from', `"${from.slice(0, 40)}" is not a phone number`)
    chosen = numbers.find((n) => n.number === wanted)
    if (!chosen) throw invalid('from', `${wanted} is not one of agent ${agent.name}'s numbers`)
  } else {
    chosen = numbers.find((n) => n.number === agent.phoneNumber) ?? numbers[0]
  }
  if (!chosen) throw clashes(`agent ${agent.name} has no phone number attached`)
  const callable = numbers.filter((n) => n.source === 'rented' || n.carrierCredentials)
  if (chosen.source === 'brought' && !chosen.carrierCredentials) {
    const hint = callable.length ? `; ${callable[0].number} can (send it as from)` : ''
    throw clashes(`${chosen.number} is a brought number without carrier credentials: add them in the console before placing calls from it${hint}`)
  }
  return chosen
}

/** `scheduledFor`: a real instant, in the future, at most SCHEDULE_MAX_DAYS ahead; null rings now. */
export function scheduleTime(value: string | null | undefined, nowMs: number): number | null {
  if (value === undefined || value === null) return null
  const at = Date.parse(checkInstant(value, 'scheduledFor'))
  // An instant already past (or this very moment) is a call to ring now, which is what was meant.
  if (at <= nowMs) return null
  if (at - nowMs > SCHEDULE_MAX_DAYS * DAY_MS) throw invalid('scheduledFor', `is more than ${SCHEDULE_MAX_DAYS} days ahead`)
  return at
}

export function checkVariables(variables: Record<string, MetadataValue>): Record<string, MetadataValue> {
  const names = Object.keys(variables)
  if (names.length > VARIABLES_MAX) throw invalid('variables', `has ${names.length} values; at most ${VARIABLES_MAX}`)
  for (const name of names) {
    if (name === '__proto__') throw invalid('variables', 'name "__proto__" is not allowed')
    if (name.length < 1 || name.length > VARIABLE_NAME_MAX) throw invalid('variables', `name "${name.slice(0, 60)}" must be 1–${VARIABLE_NAME_MAX} characters`)
    const value = variables[name]
    if (typeof value === 'string' && value.length > VARIABLE_VALUE_MAX) throw invalid(`variables.${name}`, `must be at most ${VARIABLE_VALUE_MAX} characters`)
    if (typeof value === 'number' && !Number.isFinite(value)) throw invalid(`variables.${name}`, 'must be a finite number')
  }
  return variables
}

/** `extract` as the analysis reads it; names unique (case-insensitively), blank names refused. */
export function extractSpecs(extract: PlaceCall['extract']): FieldSpec[] | null {
  if (extract === undefined) return null
  const seen = new Set<string>()
  return extract.map((f, i) => {
    const name = notBlank(f.name, `extract[${i}].name`).trim()
    if (seen.has(name.toLowerCase())) throw invalid(`extract[${i}].name`, `"${name}" appears twice`)
    seen.add(name.toLowerCase())
    return { name, type: f.type ?? 'text', description: f.description ?? null, choices: f.choices ?? null }
  })
}

/** The idempotency key of a placement: the header wins over the body member (docs/spec.md Calls). */
export function idempotencyKeyOf(header: string | undefined, body: string | undefined): string | undefined {
  const key = header ?? body
  if (key !== undefined && key.trim() === '') throw invalid(header !== undefined ? 'Idempotency-Key' : 'idempotencyKey', 'must not be blank')
  return key
}

/** 429 with Retry-After (docs/spec.md Errors for POST calls: both ceilings carry it). */
export const tooManyCalls = (message: string, retryAfterSeconds: number) => tooMany(message, retryAfterSeconds)
