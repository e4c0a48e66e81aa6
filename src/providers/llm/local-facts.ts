/**
 * The local model's second source after knowledge passages: the lines the business wrote itself
 * in the agent's settings, read back from the system prompt (features/conversations/prompt.ts
 * writes the sections named here), and the one that best answers a question.
 */
import { bestSentences, isHeadingLine, terms } from './local-text'

/**
 * Headings of the system-prompt sections the business wrote itself (features/conversations/
 * prompt.ts writes them; each section is its heading line, then lines without blanks, then a
 * blank line). The local model answers from these and the `Business: …` line, never from the
 * rest (the starter persona, the rules): those are how to behave, not facts about the business.
 */
export const BUSINESS_INSTRUCTIONS_HEADING = 'Instructions from the business:'
export const STEPS_HEADING = 'Steps to follow, in order:'

/**
 * A line answers when it holds MORE than this share of the question's words (`terms`). Knowledge
 * search asks 0.4 of idf-weighted words (knowledge/search-index.ts FOUND_SIMILARITY); a dozen
 * lines of instructions are no corpus to weigh words by, so every word counts the same and the
 * bar is higher: a majority ("what are your office hours?" needs both `office` and `hour`, so
 * "delivery hours" does not get the office hours; "how do table bookings work?" two of three).
 */
export const FACT_MATCH_SHARE = 0.5

/** A line the business wrote; `context` (its heading, a step's title) helps match, `text` is said. */
export interface Fact {
  context: string
  text: string
}

/** The business's own lines from the system prompt: instructions, steps, the business description. */
export function businessFacts(system: string): Fact[] {
  const facts: Fact[] = []
  const business = /^\s*business\s*:\s*(.+?)\s*$/im.exec(system)?.[1]
  if (business) facts.push({ context: '', text: business })
  for (const section of system.split(/\n\s*\n/)) {
    const [heading, ...lines] = section.split('\n').map((l) => l.trim())
    const body = lines.filter(Boolean)
    if (heading === BUSINESS_INSTRUCTIONS_HEADING) {
      body.forEach((line, i) => {
        // A heading line is the context of the line below it, never an answer on its own.
        if (i + 1 < body.length && isHeadingLine(line)) return
        const above = i > 0 && isHeadingLine(body[i - 1]) ? body[i - 1] : ''
        facts.push({ context: above, text: line })
      })
    } else if (heading === STEPS_HEADING) {
      for (const line of body) {
        // prompt.ts writes `<n>. <title> — <detail>`; the detail may hold dashes of its own.
        const step = line.replace(/^\d+\.\s+/, '')
        const dash = step.indexOf(' — ')
        facts.push(dash < 0 ? { context: '', text: step } : { context: step.slice(0, dash), text: step.slice(dash + 3).trim() })
      }
    }
  }
  return facts
}

/** The fact that shares most of the question's words, if it shares more than FACT_MATCH_SHARE. */
export function answerFromFacts(facts: Fact[], query: string): { text: string; share: number } | null {
  const q = terms(query)
  if (q.size === 0) return null
  let best: { fact: Fact; share: number } | null = null
  for (const fact of facts) {
    const words = terms(`${fact.context} ${fact.text}`)
    let hits = 0
    for (const w of q) if (words.has(w)) hits++
    const share = hits / q.size
    if (!best || share > best.share) best = { fact, share }
  }
  if (!best || best.share <= FACT_MATCH_SHARE) return null
  return { text: bestSentences(best.fact.text, query), share: best.share }
}
