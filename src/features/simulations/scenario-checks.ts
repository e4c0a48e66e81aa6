/**
 * What a scenario may say (docs/api/simulations.md "Scenarios"): its caller, scripted or a persona
 * (or replaying a call: its `audio` lines), and the members each expectation kind takes, each
 * refusal naming the member; and a caller line as the sandbox callee reads it.
 */
import { invalid } from '../../refusals'
import type { ExpectationSpec, ScenarioInput } from './model'
import type { ScenarioDoc } from './repository'

const NEEDS: Record<ExpectationSpec['kind'], (keyof ExpectationSpec)[]> = {
  field: ['name'],
  says: ['text'],
  neverSays: ['text'],
  tool: ['name'],
  ended: ['by'],
  maxTurns: ['turns'],
  slowestTurn: ['ms'],
}
const ALL_MEMBERS: (keyof ExpectationSpec)[] = ['name', 'equals', 'oneOf', 'text', 'by', 'turns', 'ms']

/** The members each expectation kind takes, checked by name (the schema allows each on every kind). */
export function checkExpectations(list: ExpectationSpec[]): void {
  list.forEach((e, i) => {
    const at = `expectations[${i}]`
    for (const member of NEEDS[e.kind]) if (e[member] === undefined) throw invalid(`${at}.${member}`, `is required for kind ${e.kind}`)
    const allowed = new Set<keyof ExpectationSpec>([...NEEDS[e.kind], ...(e.kind === 'field' ? (['equals', 'oneOf'] as const) : [])])
    for (const member of ALL_MEMBERS) if (e[member] !== undefined && !allowed.has(member)) throw invalid(`${at}.${member}`, `does not apply to kind ${e.kind}`)
    if (e.kind === 'field' && (e.equals === undefined) === (e.oneOf === undefined)) throw invalid(`${at}.equals`, 'give either equals or oneOf for a field')
    if ((e.kind === 'says' || e.kind === 'neverSays') && e.text!.trim() === '') throw invalid(`${at}.text`, 'must not be blank')
  })
}

/** Keys a caller line may press: the keypad's (keypad.ts), as many as an agent's send_digits takes. */
const DIGITS = /^[0-9*#A-D]{1,32}$/
/** Text the sandbox callee reads as a marker rather than words (sandbox-callee.ts): a said line may not start with it. */
const MARKER = /^(?:[>~]|\[(?:keypad|menu|wait|after|clip)\b)/i

/** Line members only a phone caller has: a website visitor writes its lines, one after each answer. */
const PHONE_ONLY = ['digits', 'waitMs', 'interrupt', 'noise', 'afterMs'] as const

type CallerLineInput = NonNullable<ScenarioInput['caller']['lines']>[number]

/** A caller is scripted (`lines`) or a persona a vendor model plays (`persona` and `goal`), never both. */
export function checkCaller(caller: ScenarioInput['caller'], channel: ScenarioDoc['channel'], replayOf: string | null): void {
  if (caller.fromCall !== undefined && caller.fromCall !== replayOf)
    throw invalid('caller.fromCall', replayOf ? `is ${replayOf} for this scenario` : 'is set by POST /simulations/scenarios with fromCall, not written')
  caller.lines?.forEach((l, i) => {
    if (l.audio && !replayOf) throw invalid(`caller.lines[${i}].audio`, 'plays a call’s recording: only in a scenario made from a call (fromCall)')
    if (l.audio && (l.say === undefined || l.digits !== undefined || l.noise)) throw invalid(`caller.lines[${i}].audio`, 'goes with say (the words heard in it), not digits or noise')
    if (l.audio && l.audio.toMs <= l.audio.fromMs) throw invalid(`caller.lines[${i}].audio.toMs`, 'must be after fromMs')
  })
  const personaOnly = (['goal', 'maxTurns', 'opening'] as const).filter((m) => caller[m] !== undefined)
  if (caller.lines !== undefined && caller.persona !== undefined) throw invalid('caller.persona', 'a caller is scripted (lines) or a persona, not both')
  if (caller.lines !== undefined) {
    if (personaOnly.length > 0) throw invalid(`caller.${personaOnly[0]}`, 'applies only to a persona caller (caller.persona), not to scripted lines')
    checkLines(caller.lines, channel)
    return
  }
  if (caller.persona === undefined) throw invalid('caller.lines', 'is required (or caller.persona with caller.goal, for a caller a model plays)')
  if (caller.persona.trim() === '') throw invalid('caller.persona', 'must not be blank')
  if (caller.goal === undefined) throw invalid('caller.goal', 'is required with caller.persona: what the caller wants done, so the model knows when to hang up')
  if (caller.goal.trim() === '') throw invalid('caller.goal', 'must not be blank')
  if (caller.opening !== undefined && caller.opening.trim() === '') throw invalid('caller.opening', 'must not be blank')
  if (caller.opening !== undefined && MARKER.test(caller.opening.trim()))
    throw invalid('caller.opening', 'must not start with >, ~, [keypad], [menu], [wait], [after] or [clip] (the sandbox caller’s markers)')
}

function checkLines(lines: CallerLineInput[], channel: ScenarioDoc['channel']): void {
  lines.forEach((l, i) => {
    const at = `caller.lines[${i}]`
    if (channel !== 'phone') {
      for (const member of PHONE_ONLY)
        if (l[member] !== undefined)
          throw invalid(`${at}.${member}`, `applies only to channel phone; a ${channel === 'web' ? 'website visitor' : 'chat-app customer'} writes each line once the agent has answered`)
    }
    const what = [l.say !== undefined && 'say', l.digits !== undefined && 'digits', l.noise && 'noise'].filter(Boolean)
    if (what.length === 0) throw invalid(`${at}.say`, 'is required (or digits, or noise: true)')
    if (what.length > 1) throw invalid(`${at}.${what[1]}`, `a line is one of say, digits or noise, not ${what.join(' and ')}`)
    if (l.say !== undefined && l.say.trim() === '') throw invalid(`${at}.say`, 'must not be blank')
    if (l.say !== undefined && MARKER.test(l.say.trim()))
      throw invalid(`${at}.say`, 'must not start with >, ~, [keypad], [menu], [wait], [after] or [clip] (the sandbox caller’s markers); use interrupt, noise, digits, waitMs or afterMs')
    if (l.digits !== undefined && !DIGITS.test(l.digits)) throw invalid(`${at}.digits`, '1–32 keypad keys: 0-9, *, #, A-D')
    if (l.noise && l.interrupt !== undefined) throw invalid(`${at}.interrupt`, 'a noise line is always over the agent: no interrupt')
    if (l.digits !== undefined && l.interrupt) throw invalid(`${at}.interrupt`, 'only a said line interrupts; keys are pressed in turn')
    const over = l.noise || l.interrupt
    if (over && l.waitMs !== undefined) throw invalid(`${at}.waitMs`, 'does not apply to a line over the agent (interrupt or noise); afterMs says when it starts')
    if (!over && l.afterMs !== undefined) throw invalid(`${at}.afterMs`, 'applies only to a line over the agent (interrupt: true or noise: true); waitMs sets the pause before a line in turn')
  })
  if (lines.every((l) => l.noise)) throw invalid('caller.lines', 'needs at least one line that says something or presses keys')
}

/** A caller line as the sandbox callee reads it (sandbox-callee.ts markers). */
export function calleeLine(l: CallerLineInput): string {
  if (l.noise) return l.afterMs !== undefined ? `~ [after ${l.afterMs}]` : '~'
  if (l.interrupt) return `> ${l.afterMs !== undefined ? `[after ${l.afterMs}] ` : ''}${l.say!.trim()}`
  const words = l.digits !== undefined ? `[keypad] ${l.digits}` : l.say!.trim()
  return l.waitMs !== undefined ? `[wait ${l.waitMs}] ${words}` : words
}
