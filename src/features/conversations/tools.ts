/**
 * The tools an agent is offered, as JSON-Schema specs the LanguageModel port sends to the vendor.
 * Which ones depend on the agent's settings and the channel (docs/spec.md Agent: escalation,
 * captureLeads, scheduleCallbacks; end_call only makes sense on a call, and transfer_call on a call
 * of an agent with transfers).
 */
import type { ToolSpec } from '../../providers/llm'
import type { AgentDoc } from '../agents/public'
import type { Channel } from './model'

export const TOOL_NAMES = ['search_knowledge', 'capture_lead', 'escalate', 'schedule_callback', 'end_call', 'transfer_call', 'send_digits'] as const
export type ToolName = (typeof TOOL_NAMES)[number]

const SPECS: Record<ToolName, ToolSpec> = {
  search_knowledge: {
    name: 'search_knowledge',
    description: "Search the business's knowledge (pasted documents and web pages) for passages that answer a question.",
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: 'the question, in the customer’s words' } },
      required: ['query'],
    },
  },
  capture_lead: {
    name: 'capture_lead',
    description: 'Save the contact details an interested customer gave, so the team can follow up.',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        email: { type: 'string' },
        phone: { type: 'string', description: 'with country code when the customer gave one' },
        note: { type: 'string', description: 'what they are interested in' },
      },
    },
  },
  escalate: {
    name: 'escalate',
    description: 'Hand the conversation to a person from the team.',
    parameters: { type: 'object', properties: { reason: { type: 'string', description: 'why a person is needed' } } },
  },
  schedule_callback: {
    name: 'schedule_callback',
    description: 'Book a phone call back to the customer at the time they asked for.',
    parameters: {
      type: 'object',
      properties: {
        when: { type: 'string', description: 'the time the customer asked for, as an ISO 8601 instant or in their words' },
        phone: { type: 'string', description: 'the number to call; omit to use the one the customer is known by' },
        note: { type: 'string', description: 'what the call is about' },
      },
      required: ['when'],
    },
  },
  end_call: {
    name: 'end_call',
    description: 'Hang up the phone call after saying goodbye.',
    parameters: { type: 'object', properties: { reason: { type: 'string' } } },
  },
  send_digits: {
    name: 'send_digits',
    description:
      'Press keys on the phone keypad, to choose in a phone menu ("press 1 for appointments") or enter a number it asks for. Keys 0-9, *, #; w waits half a second. The keys are pressed after what you say now.',
    parameters: { type: 'object', properties: { digits: { type: 'string', pattern: '^[0-9*#w]{1,32}$', description: 'the keys, in order, e.g. 1 or 40521#' } }, required: ['digits'] },
  },
  // Its destinations are the agent's: transferSpec fills them in.
  transfer_call: {
    name: 'transfer_call',
    description: 'Put the caller through to a person from the team, after telling them who you are connecting them to.',
    parameters: { type: 'object', properties: { destination: { type: 'string' } }, required: ['destination'] },
  },
}

/** transfer_call with the agent's destinations: their names to choose from, and when to use each (the model reads it). */
function transferSpec(agent: Pick<AgentDoc, 'transfers'>): ToolSpec {
  const transfers = agent.transfers ?? []
  const when = transfers.map((d) => `"${d.name}": ${d.whenToUse}`).join('; ')
  return {
    ...SPECS.transfer_call,
    description: `${SPECS.transfer_call.description} Destinations, and when to use each: ${when}.`,
    parameters: {
      type: 'object',
      properties: { destination: { type: 'string', enum: transfers.map((d) => d.name), description: 'the name of the destination' } },
      required: ['destination'],
    },
  }
}

/**
 * `escalate` is offered when either escalation switch is on: `onRequest` (the customer asks for a
 * person) and `onNoAnswer` (the agent cannot answer) both need the same tool; the prompt says which.
 */
export function toolsFor(agent: AgentDoc, channel: Channel): ToolName[] {
  const names: ToolName[] = ['search_knowledge']
  if (agent.captureLeads) names.push('capture_lead')
  if (agent.escalation.onRequest || agent.escalation.onNoAnswer) names.push('escalate')
  if (agent.scheduleCallbacks) names.push('schedule_callback')
  if (channel === 'voice') names.push('end_call')
  if (channel === 'voice' && (agent.transfers ?? []).length > 0) names.push('transfer_call')
  if (channel === 'voice') names.push('send_digits')
  return names
}

export const toolSpecs = (names: ToolName[], agent?: Pick<AgentDoc, 'transfers'>): ToolSpec[] => names.map((n) => (n === 'transfer_call' && agent ? transferSpec(agent) : SPECS[n]))

export const isToolName = (name: string): name is ToolName => (TOOL_NAMES as readonly string[]).includes(name)
