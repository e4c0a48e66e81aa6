/**
 * Runs the tools the model calls and says what happened, in a form the model can read.
 *
 * `sideEffects: 'simulated'` is test chat (docs/spec.md Agents, test chat rules): whatever would phone,
 * message, email or send a code to a person, or create or change a calendar booking, is switched
 * off and the output says what would have happened. Lead capture (the `lead.captured` event),
 * escalation to the team, writes of actions and calendar reads stay real.
 *
 * A tool that cannot do its job answers `{ error }` instead of throwing, so the model can tell the
 * customer; only failures of our own infrastructure (the store) propagate.
 */
import type { EventBus } from '../../events/bus'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { AgentDoc } from '../agents/public'
import { normalizePhone } from '../contacts/public'
import type { SearchOutcome } from '../knowledge/public'
import { KnowledgeError } from '../knowledge/public'
import type { ConversationDoc } from './model'
import type { ConversationService } from './service'
import { isToolName, type ToolName } from './tools'

/**
 * Passages handed to the model per search. The knowledge passages are ~800 characters
 * (knowledge/chunking.ts: "the top 3–5 fit a prompt beside the instructions and the
 * conversation"); 4 sits in that range.
 */
export const SEARCH_PASSAGES = 4
/** Free-text tool arguments are echoed into outputs and events; a sentence is plenty. */
const MAX_ARG_CHARS = 200

export type SideEffects = 'live' | 'simulated'

export interface KnowledgeSearcher {
  search(workspaceId: string, agentId: string, query: string, k?: number, simulated?: boolean): Promise<SearchOutcome>
}

export interface CallbackRequest {
  workspaceId: string
  agentId: string
  conversationId: string
  when: string
  phone: string | null
  note: string | null
}

/** Books a real callback (a scheduled call; the calls feature provides it); answers the tool's output: booked, or why not. */
export interface CallbackScheduler {
  schedule(request: CallbackRequest): Promise<object>
}

export interface ToolContext {
  workspace: WorkspaceDoc
  agent: AgentDoc
  conversation: ConversationDoc
  sideEffects: SideEffects
}

export interface ToolOutcome {
  output: unknown
  /** The conversation after the tool (escalate changes its status). */
  conversation?: ConversationDoc
  /** end_call: the voice pipeline hangs up after speaking the reply. */
  endCall?: boolean
  /** transfer_call: the destination the voice pipeline puts the caller through to after speaking the reply. */
  transfer?: string
  /** send_digits: keys the voice pipeline presses (tones on the line) after speaking the reply. */
  digits?: string
}

export interface ToolRunnerDeps {
  knowledge: KnowledgeSearcher
  conversations: ConversationService
  bus: EventBus
  callbacks?: CallbackScheduler
}

export class ToolRunner {
  constructor(private readonly deps: ToolRunnerDeps) {}

  /** The calls feature, built after this one, books callbacks. */
  provideCallbacks(callbacks: CallbackScheduler): void {
    this.deps.callbacks = callbacks
  }

  async run(name: string, input: Record<string, unknown>, offered: ToolName[], ctx: ToolContext): Promise<ToolOutcome> {
    if (!isToolName(name) || !offered.includes(name)) return { output: { error: `there is no tool named ${name}` } }
    switch (name) {
      case 'search_knowledge':
        return this.search(input, ctx)
      case 'capture_lead':
        return this.captureLead(input, ctx)
      case 'escalate': {
        const { conversation, changed } = await this.deps.conversations.escalate(ctx.conversation, text(input.reason))
        const output = changed ? { escalated: true, status: conversation.status } : { escalated: false, status: conversation.status, note: 'the team already has this conversation' }
        return { output, conversation }
      }
      case 'schedule_callback':
        return this.scheduleCallback(input, ctx)
      case 'end_call':
        return { output: { ending: true }, endCall: true }
      case 'transfer_call':
        return this.transferCall(input, ctx)
      case 'send_digits': {
        const digits = (text(input.digits) ?? '').replace(/\s+/g, '')
        if (!/^[0-9*#w]{1,32}$/.test(digits)) return { output: { sent: false, error: 'digits must be 1 to 32 of 0-9, *, # and w (a half-second wait)' } }
        return { output: { sent: true, digits, note: 'the keys are pressed when you finish speaking; then listen to what the menu says' }, digits }
      }
    }
  }

  /** The hand-off itself happens after the reply is spoken (the voice pipeline); here the destination is checked. */
  private transferCall(input: Record<string, unknown>, ctx: ToolContext): ToolOutcome {
    const transfers = ctx.agent.transfers ?? []
    const asked = text(input.destination, 60)
    // One destination needs no choosing: a model that left it out still means it.
    const found = asked ? transfers.find((d) => d.name.toLowerCase() === asked.toLowerCase()) : transfers.length === 1 ? transfers[0] : undefined
    if (!found) return { output: { transferring: false, error: `choose one of: ${transfers.map((d) => d.name).join(', ')}` } }
    if (ctx.sideEffects === 'simulated') return { output: `Test chat: I would have put the caller through to ${found.name} (${found.phoneNumber}). Nobody was called.` }
    return { output: { transferring: true, to: found.name, note: 'tell the caller you are connecting them now; the line is handed over when you finish speaking' }, transfer: found.name }
  }

  private async search(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> {
    const query = text(input.query, 500)
    if (!query) return { output: { error: 'query is required' } }
    try {
      const found = await this.deps.knowledge.search(ctx.workspace.id, ctx.agent.id, query, SEARCH_PASSAGES, ctx.conversation.simulated === true)
      // Passages below the "found" bar are noise: handing them over invites an answer they do not support.
      const passages = found.found ? found.hits.map((h) => ({ title: h.title, text: h.text, score: Math.round(h.similarity * 1000) / 1000, documentId: h.documentId })) : []
      return { output: { found: found.found, passages } }
    } catch (err) {
      if (err instanceof KnowledgeError) return { output: { error: err.message } }
      throw err
    }
  }

  private async captureLead(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> {
    const name = text(input.name)
    const email = text(input.email)?.toLowerCase() ?? null
    const rawPhone = text(input.phone)
    const phone = rawPhone ? (normalizePhone(rawPhone) ?? rawPhone) : null
    const note = text(input.note)
    if (!name && !email && !phone) return { output: { error: 'give at least a name, an email or a phone number' } }
    const c = ctx.conversation
    // Payload (docs/spec.md leaves it to us): the details, where they came from, and whether it is a test.
    await this.deps.bus.publish({
      type: 'lead.captured',
      workspaceId: c.workspaceId,
      agentId: c.agentId,
      data: { conversationId: c.id, channel: c.channel, test: c.test, ...(c.simulated ? { simulated: true } : {}), name, email, phone, note },
    })
    return { output: { captured: true, name, email, phone } }
  }

  private async scheduleCallback(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> {
    const when = text(input.when, 100)
    if (!when) return { output: { error: 'when is required' } }
    const phone = text(input.phone) ?? ctx.conversation.customer.phone
    const note = text(input.note)
    if (ctx.sideEffects === 'simulated') {
      // Plain words, so the agent can tell the tester exactly what it would have done.
      const about = note ? ` about ${note}` : ''
      return { output: `Test chat: I would have booked a callback for ${when} to ${phone ?? "the customer's number"}${about}. Nothing was booked.` }
    }
    // Without the calls feature (a service built without it) nothing can ring: say so plainly.
    if (!this.deps.callbacks) return { output: { scheduled: false, error: 'calls cannot be booked here; tell the customer a person from the team will call back' } }
    const c = ctx.conversation
    return { output: await this.deps.callbacks.schedule({ workspaceId: c.workspaceId, agentId: c.agentId, conversationId: c.id, when, phone, note }) }
  }
}

/** A trimmed, length-capped string argument, or null when absent or blank. */
function text(value: unknown, max = MAX_ARG_CHARS): string | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null
  const s = String(value).replace(/\s+/g, ' ').trim()
  return s ? s.slice(0, max) : null
}
