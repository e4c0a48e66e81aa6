/**
 * Judging one simulated call against its scenario's expectations: each expectation passes or fails
 * with the evidence that decided it. Pure, so the same call judged twice gives the same words.
 *
 * - field: the analysed field equals `equals`, or is one of `oneOf` (strings compared trimmed and
 *   case-insensitively; numbers and booleans exactly); absent fails.
 * - says / neverSays: the words appear (or never appear) in one of the agent's lines,
 *   case-insensitively, spaces collapsed; evidence: the lines that hold them.
 * - tool: the agent called the tool `name`; evidence: every tool it called.
 * - ended: `agent` when the agent ended the call (its end_call tool, or the call's length ceiling),
 *   `caller` when the caller hung up after its script.
 * - maxTurns: the agent spoke at most `turns` times (its opening counts).
 * - slowestTurn: every answer of the agent started within `ms` of the caller's line it answers, on
 *   the service clock (the transcript's instants); evidence: the slowest turn.
 */
import type { ExpectationSpec } from './model'
import type { ExpectationOutcome, Line } from './repository'

export interface CallFacts {
  transcript: Line[]
  fields: Record<string, unknown>
  tools: string[]
  endedBy: 'agent' | 'caller' | null
  hangup: string | null
}

const words = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim()

function sameValue(actual: unknown, wanted: unknown): boolean {
  if (typeof actual === 'string' && typeof wanted === 'string') return words(actual) === words(wanted)
  return actual === wanted
}

/** The slowest agent answer to a caller's line, on the service clock. */
export function slowestTurn(transcript: Line[]): { ms: number; caller: Line; agent: Line } | null {
  let slowest: { ms: number; caller: Line; agent: Line } | null = null
  for (let i = 1; i < transcript.length; i++) {
    const [before, line] = [transcript[i - 1]!, transcript[i]!]
    if (before.speaker !== 'customer' || line.speaker !== 'agent') continue
    const ms = line.atMs - before.atMs
    if (!slowest || ms > slowest.ms) slowest = { ms, caller: before, agent: line }
  }
  return slowest
}

export function judge(expectation: ExpectationSpec, call: CallFacts): ExpectationOutcome {
  const agentLines = call.transcript.filter((l) => l.speaker === 'agent')
  const out = (passed: boolean, evidence: Record<string, unknown>): ExpectationOutcome => ({ ...expectation, passed, evidence })
  switch (expectation.kind) {
    case 'field': {
      const name = expectation.name!
      const value = Object.hasOwn(call.fields, name) ? call.fields[name] : null
      const wanted = expectation.oneOf ?? [expectation.equals]
      return out(value !== null && wanted.some((w) => sameValue(value, w)), { field: name, value })
    }
    case 'says':
    case 'neverSays': {
      const text = words(expectation.text!)
      const lines = agentLines.filter((l) => words(l.text).includes(text))
      return out(expectation.kind === 'says' ? lines.length > 0 : lines.length === 0, { lines })
    }
    case 'tool':
      return out(call.tools.includes(expectation.name!), { tools: call.tools })
    case 'ended':
      return out(call.endedBy === expectation.by, { endedBy: call.endedBy, hangup: call.hangup })
    case 'maxTurns':
      return out(agentLines.length <= expectation.turns!, { turns: agentLines.length })
    case 'slowestTurn': {
      const slow = slowestTurn(call.transcript)
      return out(slow === null || slow.ms <= expectation.ms!, { slowest: slow })
    }
  }
}
