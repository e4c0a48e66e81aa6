/**
 * The system prompt: everything the agent settings say, in one text the model reads first.
 * The facts block comes before the developer's instructions and its `Greeting: …` line is the one
 * the `local` model reads (providers/llm/local-text.ts `greetingFrom` takes the first such line),
 * so a "Greeting:" inside the instructions cannot shadow the configured greeting.
 *
 * The instructions are split in two sections: the starter persona's unedited sentences ("Manner")
 * and everything else, under BUSINESS_INSTRUCTIONS_HEADING. The local model answers questions
 * from the latter and the steps (providers/llm/local-facts.ts `businessFacts`), never from generic persona text.
 * Sections are separated by one blank line and have none inside (blank lines of the instructions
 * are dropped), so the local model can tell where each ends.
 */
import { BUSINESS_INSTRUCTIONS_HEADING, STEPS_HEADING } from '../../providers/llm/local-facts'
import type { AgentDoc } from '../agents/public'
import { isStarterPersonaLine } from '../agents/public'
import type { Channel } from './model'
import type { ToolName } from './tools'

export interface PromptContext {
  channel: Channel
  /** The tools offered this turn: the rules only mention what the model can actually do. */
  tools: ToolName[]
}

export function buildSystemPrompt(agent: AgentDoc, ctx: PromptContext): string {
  const sections: string[] = []
  const facts = [`You are ${agent.name}, an AI agent answering customers of this business over ${channelWords(ctx.channel)}.`]
  if (agent.greeting.trim()) facts.push(`Greeting: ${oneLine(agent.greeting)}`)
  if (agent.businessDescription.trim()) facts.push(`Business: ${oneLine(agent.businessDescription)}`)
  facts.push(`Language: ${languageRule(agent)}`)
  sections.push(facts.join('\n'))

  const lines = agent.instructions
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  const manner = lines.filter(isStarterPersonaLine)
  const business = lines.filter((l) => !isStarterPersonaLine(l))
  if (manner.length) sections.push(`Manner:\n${manner.join('\n')}`)
  if (business.length) sections.push(`${BUSINESS_INSTRUCTIONS_HEADING}\n${business.join('\n')}`)

  if (agent.steps.length) {
    const steps = agent.steps.map((s, i) => `${i + 1}. ${oneLine(s.title)}${s.detail.trim() ? ` — ${oneLine(s.detail)}` : ''}`)
    sections.push(`${STEPS_HEADING}\n${steps.join('\n')}`)
  }

  sections.push(
    `Rules:\n${rules(agent, ctx)
      .map((r) => `- ${r}`)
      .join('\n')}`,
  )
  return sections.join('\n\n')
}

function channelWords(channel: Channel): string {
  switch (channel) {
    case 'voice':
      return 'a phone call'
    case 'web':
      return 'the website chat'
    case 'email':
      return 'email'
    default:
      return 'a messaging app'
  }
}

/** docs/spec.md Agent: `auto` follows the customer; `secondLanguage` is ignored when language is `auto`. */
function languageRule(agent: AgentDoc): string {
  if (agent.language === 'auto') return 'reply in the language the customer writes in.'
  const second = agent.secondLanguage && agent.secondLanguage !== agent.language ? agent.secondLanguage : null
  return second ? `reply in ${agent.language}; if the customer writes in ${second} or asks for it, you may switch to ${second}.` : `reply in ${agent.language}.`
}

function rules(agent: AgentDoc, ctx: PromptContext): string[] {
  const has = (name: ToolName) => ctx.tools.includes(name)
  const out = [
    'Before answering a question about the business, call search_knowledge and answer only from the passages it returns; never invent prices, policies or promises.',
    'When the knowledge has no answer, say so plainly.',
  ]
  if (has('escalate')) {
    if (agent.escalation.onRequest) out.push('When the customer asks for a person, call escalate.')
    if (agent.escalation.onNoAnswer) out.push('When you cannot answer and the customer still needs help, call escalate so a person from the team follows up.')
  }
  if (has('capture_lead')) out.push('When an interested customer gives a name, email or phone number, call capture_lead with what they gave.')
  if (has('schedule_callback')) out.push('When the customer asks to be called back, call schedule_callback with the time they asked for.')
  if (has('end_call')) out.push('When the customer says goodbye or the call is done, say goodbye and call end_call.')
  if (has('transfer_call')) {
    const when = (agent.transfers ?? []).map((d) => `${d.name} (${d.whenToUse})`).join('; ')
    out.push(`When the caller asks for a person, or one of these applies, tell them who you are connecting them to and call transfer_call with its name: ${when}.`)
  }
  if (has('send_digits')) out.push('When a phone menu answers ("press 1 for …"), call send_digits with the key for what you are calling about; say nothing over the menu.')
  out.push(ctx.channel === 'voice' ? 'You are speaking: short sentences, no lists, no markdown, no links.' : 'Keep replies short: two or three sentences, one question at a time.')
  return out
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim()
