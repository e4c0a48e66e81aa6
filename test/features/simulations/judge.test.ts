/** Each expectation kind, passing and failing for its own reason, on one call's facts. */
import { expect, test } from 'bun:test'
import { type CallFacts, judge } from '../../../src/features/simulations/judge'
import type { ExpectationSpec } from '../../../src/features/simulations/model'

const call: CallFacts = {
  transcript: [
    { speaker: 'agent', text: 'Hello from Bean There!', atMs: 0 },
    { speaker: 'customer', text: 'When do you open?', atMs: 1_000 },
    { speaker: 'agent', text: 'We open at  7 AM.', atMs: 1_400 },
    { speaker: 'customer', text: 'My name is Priya.', atMs: 3_000 },
    { speaker: 'agent', text: 'Thanks, Priya.', atMs: 5_500 },
  ],
  fields: { name: 'Priya', visitors: 2, member: true },
  tools: ['search_knowledge', 'capture_lead'],
  endedBy: 'caller',
  hangup: 'answered',
}

const verdict = (e: ExpectationSpec) => judge(e, call)

test('field: exact (words compared without case or extra spaces) and one of', () => {
  expect(verdict({ kind: 'field', name: 'name', equals: ' priya ' })).toMatchObject({ passed: true, evidence: { field: 'name', value: 'Priya' } })
  expect(verdict({ kind: 'field', name: 'name', equals: 'Asha' })).toMatchObject({ passed: false, evidence: { value: 'Priya' } })
  expect(verdict({ kind: 'field', name: 'visitors', oneOf: [1, 2] }).passed).toBe(true)
  expect(verdict({ kind: 'field', name: 'visitors', oneOf: ['2'] }).passed).toBe(false)
  expect(verdict({ kind: 'field', name: 'member', equals: true }).passed).toBe(true)
  // A field the analysis did not find fails, with its value shown as null.
  expect(verdict({ kind: 'field', name: 'email', equals: 'x' })).toMatchObject({ passed: false, evidence: { field: 'email', value: null } })
})

test('says and neverSays look at the agent’s lines only', () => {
  expect(verdict({ kind: 'says', text: 'open at 7 am' })).toMatchObject({ passed: true, evidence: { lines: [call.transcript[2]] } })
  expect(verdict({ kind: 'says', text: 'closed' })).toMatchObject({ passed: false, evidence: { lines: [] } })
  // "My name is Priya" is the caller's: the agent never said it.
  expect(verdict({ kind: 'neverSays', text: 'my name is' }).passed).toBe(true)
  expect(verdict({ kind: 'neverSays', text: 'priya' })).toMatchObject({ passed: false, evidence: { lines: [call.transcript[4]] } })
})

test('tool, ended, maxTurns', () => {
  expect(verdict({ kind: 'tool', name: 'capture_lead' })).toMatchObject({ passed: true, evidence: { tools: ['search_knowledge', 'capture_lead'] } })
  expect(verdict({ kind: 'tool', name: 'escalate' }).passed).toBe(false)
  expect(verdict({ kind: 'ended', by: 'caller' })).toMatchObject({ passed: true, evidence: { endedBy: 'caller', hangup: 'answered' } })
  expect(verdict({ kind: 'ended', by: 'agent' }).passed).toBe(false)
  expect(verdict({ kind: 'maxTurns', turns: 3 })).toMatchObject({ passed: true, evidence: { turns: 3 } })
  expect(verdict({ kind: 'maxTurns', turns: 2 }).passed).toBe(false)
})

test('slowestTurn: the slowest answer on the service clock, with its two lines', () => {
  const slowest = { ms: 2_500, caller: call.transcript[3], agent: call.transcript[4] }
  expect(verdict({ kind: 'slowestTurn', ms: 2_500 })).toMatchObject({ passed: true, evidence: { slowest } })
  expect(verdict({ kind: 'slowestTurn', ms: 2_499 })).toMatchObject({ passed: false, evidence: { slowest } })
  // The opening answers nobody: it is not a turn to time.
  expect(judge({ kind: 'slowestTurn', ms: 0 }, { ...call, transcript: call.transcript.slice(0, 1) })).toMatchObject({ passed: true, evidence: { slowest: null } })
})
