/** The end-of-turn rules as a table: what the caller said so far → how long the agent waits, and why. */
import { describe, expect, test } from 'bun:test'
import { endOfTurn, TRAILING_WAIT_MS, type TurnShape } from '../../src/voice/end-of-turn'
import { HOSTED_WAITS, LOCAL_WAITS } from '../../src/voice/turn-waits'

/** Words come from a vendor's engine at each pause: the hosted profile's waits. */
const { complete: COMPLETE_WAIT_MS, statement: STATEMENT_WAIT_MS, question: QUESTION_WAIT_MS, number: NUMBER_WAIT_MS, neutral: NEUTRAL_WAIT_MS, unknown: UNKNOWN_WAIT_MS } = HOSTED_WAITS

const CASES: [string, TurnShape, number][] = [
  // Plainly complete: answered after the short wait.
  ['What time do you open on Sunday?', 'complete', COMPLETE_WAIT_MS],
  ['what time do you open on sunday', 'complete', QUESTION_WAIT_MS],
  ['can you call me back tomorrow', 'complete', QUESTION_WAIT_MS],
  ['I would like to book a table for two.', 'complete', STATEMENT_WAIT_MS],
  ['yes', 'complete', COMPLETE_WAIT_MS],
  ['no thanks', 'complete', COMPLETE_WAIT_MS],
  ['yes I do', 'complete', COMPLETE_WAIT_MS],
  ["that's right", 'complete', COMPLETE_WAIT_MS],
  ['thank you very much', 'complete', COMPLETE_WAIT_MS],
  ['okay', 'complete', COMPLETE_WAIT_MS],
  ['how are you', 'complete', QUESTION_WAIT_MS],
  ['when are you', 'neutral', NEUTRAL_WAIT_MS],
  ['what time do you', 'trailing', TRAILING_WAIT_MS],
  ['where can they', 'trailing', TRAILING_WAIT_MS],
  ['where do customers', 'trailing', TRAILING_WAIT_MS],
  ['what time does the shop', 'trailing', TRAILING_WAIT_MS],
  ['can the driver', 'trailing', TRAILING_WAIT_MS],
  ['could you tell me', 'trailing', TRAILING_WAIT_MS],
  ['can you let us know', 'trailing', TRAILING_WAIT_MS],
  ['could you tell me your opening hours', 'complete', QUESTION_WAIT_MS],
  ['where do customers park', 'complete', QUESTION_WAIT_MS],
  ['what did the doctor say', 'complete', QUESTION_WAIT_MS],
  ['who did it', 'complete', QUESTION_WAIT_MS],
  ['can you help me', 'complete', QUESTION_WAIT_MS],
  ['what are your opening', 'neutral', NEUTRAL_WAIT_MS],
  ['what are your opening hours', 'complete', QUESTION_WAIT_MS],
  ['is there any parking', 'complete', QUESTION_WAIT_MS],
  // A sentence the engine closed with a full stop: a word that can end one does not trail.
  ['It was on the third of March.', 'complete', STATEMENT_WAIT_MS],
  ["I don't think so.", 'complete', COMPLETE_WAIT_MS],
  ["i don't think so", 'complete', COMPLETE_WAIT_MS],
  ['What is it for?', 'complete', COMPLETE_WAIT_MS],
  ['I would love to.', 'complete', STATEMENT_WAIT_MS],
  ['Can you do that?', 'complete', COMPLETE_WAIT_MS],
  // Numbers: a whole one is answered soon; half of one waits.
  ['my number is 415 555 0123 4', 'number', NUMBER_WAIT_MS],
  ['it is 4155550123', 'number', NUMBER_WAIT_MS],
  ['table for 4', 'number', NUMBER_WAIT_MS],
  ['my number is 415 555', 'trailing', TRAILING_WAIT_MS],
  ['four one five', 'trailing', TRAILING_WAIT_MS],
  ['the code is 12', 'trailing', TRAILING_WAIT_MS],
  // A code spelled out: its "a" is a letter; closed with a full stop, it is whole.
  ['My postcode is S W one A one A A.', 'number', NUMBER_WAIT_MS],
  ['The booking reference is K L seven nine.', 'number', NUMBER_WAIT_MS],
  ['The order number is four eight two one three.', 'number', NUMBER_WAIT_MS],
  ['my postcode is s w one a', 'trailing', TRAILING_WAIT_MS],
  ['it is a l e x', 'trailing', TRAILING_WAIT_MS],
  // Trailing off: waits the longest.
  ['I want to book a table and', 'trailing', TRAILING_WAIT_MS],
  ['so', 'trailing', TRAILING_WAIT_MS],
  ['um', 'trailing', TRAILING_WAIT_MS],
  ['I was wondering if', 'trailing', TRAILING_WAIT_MS],
  ['yes and', 'trailing', TRAILING_WAIT_MS],
  ['can I come on the', 'trailing', TRAILING_WAIT_MS],
  ['maybe next week,', 'trailing', TRAILING_WAIT_MS],
  ['let me think...', 'trailing', TRAILING_WAIT_MS],
  ['on the 3rd of march', 'trailing', TRAILING_WAIT_MS],
  ["I'm", 'trailing', TRAILING_WAIT_MS],
  ["that's all, thank", 'trailing', TRAILING_WAIT_MS],
  // A full stop does not close what no sentence ends on.
  ['Can I come on the.', 'trailing', TRAILING_WAIT_MS],
  ['I want milk and.', 'trailing', TRAILING_WAIT_MS],
  ['Is it a.', 'trailing', TRAILING_WAIT_MS],
  // Neither: the floor.
  ['I would like to book a table', 'neutral', NEUTRAL_WAIT_MS],
  ['the delivery never arrived', 'neutral', NEUTRAL_WAIT_MS],
  // Nothing heard (an engine without partial results).
  ['', 'unknown', UNKNOWN_WAIT_MS],
]

describe('end of turn', () => {
  for (const [text, shape, waitMs] of CASES) {
    test(`"${text}" → ${shape}, ${waitMs} ms`, () => {
      const e = endOfTurn(text)
      expect({ shape: e.shape, waitMs: e.waitMs }).toEqual({ shape, waitMs })
      expect(e.why.length).toBeGreaterThan(0)
    })
  }

  test("the agent's endpointingMs is the wait for a trailing turn and caps the others", () => {
    expect(endOfTurn('and', 2_500).waitMs).toBe(2_500)
    expect(endOfTurn('and', 300).waitMs).toBe(300)
    expect(endOfTurn('the delivery never arrived', 300).waitMs).toBe(300)
    expect(endOfTurn('yes', 300).waitMs).toBe(COMPLETE_WAIT_MS)
  })

  test('a complete turn waits less than a neutral one, which waits less than a trailing one', () => {
    for (const waits of [HOSTED_WAITS, LOCAL_WAITS]) {
      expect(waits.complete).toBeLessThan(waits.statement)
      expect(waits.complete).toBeLessThan(waits.question)
      for (const w of [waits.statement, waits.question, waits.number]) expect(w).toBeLessThanOrEqual(waits.neutral)
      expect(waits.neutral).toBeLessThan(TRAILING_WAIT_MS)
      expect(waits.holdingFloor).toBeLessThanOrEqual(waits.holding)
    }
  })

  test('a question mark is answered sooner than a full stop, after which a caller may add a sentence', () => {
    const question = endOfTurn('Can I change my booking?')
    const statement = endOfTurn('My parcel never arrived.')
    expect(question).toMatchObject({ shape: 'complete', waitMs: HOSTED_WAITS.complete })
    expect(statement).toMatchObject({ shape: 'complete', waitMs: HOSTED_WAITS.statement })
    expect(statement.waitMs).toBeGreaterThan(question.waitMs)
    // With no question mark (a vendor's words without punctuation) a question may go on: "Can I come on Tuesday … at about ten".
    expect(endOfTurn('can I come on tuesday').waitMs).toBe(HOSTED_WAITS.question)
    expect(HOSTED_WAITS.question).toBeGreaterThan(question.waitMs)
    // A short answer with a full stop is whole: answered as soon as a question.
    expect(endOfTurn("I don't think so.").waitMs).toBe(HOSTED_WAITS.complete)
  })

  test('with no words at a pause (the local profile) the voice waits longer than any word wait short of trailing', () => {
    expect(endOfTurn('', TRAILING_WAIT_MS, undefined, LOCAL_WAITS)).toMatchObject({ shape: 'unknown', waitMs: LOCAL_WAITS.unknown })
    expect(LOCAL_WAITS.falling).toBeGreaterThan(HOSTED_WAITS.complete)
  })
})
