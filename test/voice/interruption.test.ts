/**
 * The interruption rule (src/voice/interruption.ts) row by row: whether speech that stopped the
 * agent was a backchannel (the agent resumes) or the caller taking the turn, on a vendor's words
 * and on words not to be trusted, with the agent's interruption dial.
 */
import { describe, expect, test } from 'bun:test'
import { DEFAULT_DIALS } from '../../src/voice/dials'
import { hasStopWord, judgeOverlap, MAX_BACKCHANNEL_MS } from '../../src/voice/interruption'

const worded = (text: string, speechMs: number) => judgeOverlap({ text, speechMs, wordsJudge: true }).backchannel
const wordless = (text: string, speechMs: number, soundsLikeStop = false) => judgeOverlap({ text, speechMs, wordsJudge: false, soundsLikeStop }).backchannel

describe('speech that stopped the agent', () => {
  test('a stop word takes the turn however short, on any engine', () => {
    for (const text of ['Stop.', 'No.', 'Wait.', 'Hold on.', 'Hang on, which parcel?', 'okay, wait']) {
      expect(hasStopWord(text)).toBe(true)
      expect(worded(text, 200)).toBe(false)
      expect(wordless(text, 200)).toBe(false)
    }
    expect(hasStopWord('Mm-hmm.')).toBe(false)
    expect(hasStopWord('know')).toBe(false)
  })

  test('a vendor’s words decide within the bound: backchannels and nothing resume, other words take the turn', () => {
    for (const text of ['Mhm.', 'Mm-hmm.', 'Okay, yeah.', 'yeah, yeah', '']) expect(worded(text, 900)).toBe(true)
    expect(worded('Sorry, can I ask something?', 900)).toBe(false)
    expect(worded('i can', 300)).toBe(false)
    expect(worded('yeah', MAX_BACKCHANNEL_MS.worded + 1)).toBe(false)
  })

  test('words not to be trusted: the length decides, unless they sound like a stop word', () => {
    expect(wordless('i can', MAX_BACKCHANNEL_MS.wordless)).toBe(true)
    expect(wordless('', 300)).toBe(true)
    expect(wordless('i can look', MAX_BACKCHANNEL_MS.wordless + 1)).toBe(false)
    expect(wordless('yeah okay right', 1_200)).toBe(false)
    expect(wordless('top', 200, true)).toBe(false)
    expect(judgeOverlap({ text: 'top', speechMs: 200, wordsJudge: false, soundsLikeStop: true }).why).toBe('"top" sounds like a stop word: the caller takes the turn')
  })

  test('the agent’s dial comes first: its own backchannels and fewer words than its minimum resume, stop words included', () => {
    const dial = { ...DEFAULT_DIALS.interruptions, minWords: 3, backchannels: ['sounds lovely'] }
    expect(judgeOverlap({ text: 'No, wait.', speechMs: 400, wordsJudge: true }, dial).backchannel).toBe(true)
    expect(judgeOverlap({ text: 'Sounds lovely!', speechMs: 600, wordsJudge: true }, dial).backchannel).toBe(true)
    expect(judgeOverlap({ text: 'Sorry, can I ask something?', speechMs: 900, wordsJudge: true }, dial).backchannel).toBe(false)
  })
})
