/**
 * The conversation engine: one customer message in, one agent reply out. The same engine serves
 * test chat now and web chat, messaging and voice later (the voice pipeline passes `onText` to
 * speak sentences while the rest is generated, and reads `endCall`).
 *
 * A turn: pick the model (ModelResolver) → read memory → record the customer message → loop
 * model → tool calls → tool results → model, at most MAX_TOOL_ROUNDS times → record the reply
 * with the tools it used and, in the same commit, `chat.message.completed` (chats only: a spoken
 * reply on a call is not a chat message; the call has its own events), then deliver that event →
 * charge the reply through the meter.
 *
 * Metering lives here so every text channel (test chat, web, chat app, bot app, email) is charged
 * and stopped the same way. When the account's replies are stopped (allowance used up, or a
 * metered wallet that cannot pay one): a test chat is refused with 402 before anything is
 * written; a live conversation keeps the customer's message, is not answered, and is handed to a
 * person (escalated, the reason naming the money) so the team can still answer what came in; the
 * turn says why (`refused`) so the channel tells the customer the chat is not available, and a
 * warn line says it for the operator. Calls are billed by the minute, so a spoken turn is neither
 * charged as a reply nor stopped here (a call is refused up front when it cannot be paid).
 *
 * Nothing is written until the model is resolved, so a turn refused for its model (503, no
 * provider key) leaves no trace. A provider failure mid-turn (timeout, outage) happens after the
 * customer's message is recorded: that message stays, without a reply, as it would in any inbox.
 */

import type { Clock } from '../../clock'
import type { DomainEvent } from '../../events/bus'
import type { EventPayload } from '../../events/payloads'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Logger } from '../../logger'
import type { ChatMessage, LanguageModel, StreamRequest, ToolCall } from '../../providers/llm'
import { notCovered, type Refused } from '../../refusals'
import type { Write } from '../../store/port'
import { keypadLine } from '../../voice/public'
import type { AgentDoc } from '../agents/public'
import type { Meter, ReplyAllowance } from '../usage/public'
import { llmFailure } from './llm-failure'
import { MEMORY_MESSAGES, memoryTurns } from './memory'
import type { ConversationDoc, MessageDoc, ToolRun } from './model'
import type { ModelResolver } from './model-resolver'
import { buildSystemPrompt } from './prompt'
import type { ConversationService } from './service'
import type { SideEffects, ToolRunner } from './tool-runner'
import { toolSpecs, toolsFor } from './tools'

/**
 * Model calls per reply. A reply needs at most: search → an action (lead, escalation, callback)
 * → the answer, i.e. three; one more lets the model search again with better words. More than
 * that is a model looping on tools, which costs money and keeps the customer waiting. The last
 * round's tool calls are not run: whatever text came with them is the reply.
 */
export const MAX_TOOL_ROUNDS = 4
/** Tool calls run from one model turn; models rarely make more than two in parallel. */
export const MAX_CALLS_PER_ROUND = 5
/** Said when the model produced no text at all (it only kept calling tools, or was filtered). */
export const NO_REPLY = "I'm sorry, I couldn't finish that answer. Could you ask me another way?"

export interface EngineDeps {
  conversations: ConversationService
  tools: ToolRunner
  models: ModelResolver
  meter: Pick<Meter, 'replyAllowance' | 'charge'>
  clock: Clock
  /** Where a reply refused for money is said (a warn line); unset in unit tests. */
  logger?: Logger
}

export interface TurnInput {
  workspace: WorkspaceDoc
  agent: AgentDoc
  conversation: ConversationDoc
  /** The agent's model when the caller already resolved it (test chat does, before writing anything). */
  model?: LanguageModel
  /** What the customer wrote (or said, transcribed). */
  text: string
  sideEffects: SideEffects
  /** The customer's message, when the channel recorded it already (an inbound message is stored on receipt). */
  recorded?: { message: MessageDoc; conversation: ConversationDoc }
  /** Writes committed together with the reply (the answer's next step, so a crash can tell it was written). */
  replyAlso?: (reply: MessageDoc) => Write[]
  /** Called with each piece of reply text as the model streams it. */
  onText?: (piece: string) => void
  signal?: AbortSignal
  /**
   * A reply started early (the voice pipeline's preemptive generation): the model's first call runs
   * at once, but nothing is written, charged or run as a tool until this resolves; a turn whose
   * `signal` aborts first leaves no trace.
   */
  holdWrites?: Promise<void>
  /**
   * With `holdWrites`: the first model call has ended while the writes are held. A reply that
   * opens with a tool call has nothing to say until it runs, so its caller releases it now.
   */
  firstStepDone?: () => void
}

export interface TurnResult {
  conversation: ConversationDoc
  /** '' when the agent stays quiet because a teammate has taken the conversation over. */
  reply: string
  answered: boolean
  tools: ToolRun[]
  endCall: boolean
  /** The destination the agent's transfer_call chose (the voice pipeline puts the caller through after the reply); null when none. */
  transfer?: string | null
  /** Keys the agent's send_digits pressed (the voice pipeline plays them after the reply); null when none. */
  digits?: string | null
  customerMessage: MessageDoc
  replyMessage: MessageDoc | null
  /** Why the agent did not answer when the account cannot pay for replies (the 402's words); absent otherwise. */
  refused?: string
}

interface Step {
  text: string
  toolCalls: ToolCall[]
  usage: { inputTokens: number; outputTokens: number }
}

export class ConversationEngine {
  constructor(private readonly deps: EngineDeps) {}

  async respond(turn: TurnInput): Promise<TurnResult> {
    const { workspace, agent, sideEffects } = turn
    // Before anything is written: an agent whose model cannot run leaves no half-recorded turn.
    const model = turn.model ?? (await this.deps.models.resolve(workspace, agent))
    // Calls are billed by the minute; a simulations run's conversation is never billed.
    const metered = turn.conversation.channel !== 'voice' && !turn.conversation.simulated
    const stopped = metered ? await this.stoppedReplies(workspace) : null
    if (stopped && turn.conversation.test) throw repliesStopped(stopped)
    const history = (await this.deps.conversations.history(turn.conversation.id, MEMORY_MESSAGES + 1)).filter((m) => m.id !== turn.recorded?.message.id).slice(-MEMORY_MESSAGES)
    // A reply started early asks the model before anything is written (the checks above only read).
    const early = turn.holdWrites ? this.firstStep(model, agent, turn, history) : null
    if (early && turn.firstStepDone) void early.step.then(turn.firstStepDone, turn.firstStepDone)
    if (turn.holdWrites) await released(turn.holdWrites, turn.signal)
    const recorded = turn.recorded ?? (await this.deps.conversations.addMessage(turn.conversation, { author: 'customer', parts: [{ type: 'text', text: turn.text }] }))
    let conversation = recorded.conversation
    // A teammate answers a conversation they took over: nothing is owed, whatever the balance.
    if (conversation.status === 'handled') {
      return { conversation, reply: '', answered: false, tools: [], endCall: false, customerMessage: recorded.message, replyMessage: null }
    }
    if (stopped) {
      // Not answered, and said so: the team sees the message (escalated, with why) and may answer it.
      const refused = repliesStopped(stopped).message
      this.deps.logger?.warn(
        { workspace: workspace.id, agent: agent.id, conversation: conversation.id, channel: conversation.channel, reason: refused },
        'a customer message was not answered: the account cannot pay for replies',
      )
      const handed = await this.deps.conversations.escalate(conversation, `the agent could not reply: ${refused}`)
      return { conversation: handed.conversation, reply: '', answered: false, tools: [], endCall: false, customerMessage: recorded.message, replyMessage: null, refused }
    }

    const { offered, request, messages } = early ?? this.prompt(agent, turn, history)
    const runs: ToolRun[] = []
    const texts: string[] = []
    const usage = { inputTokens: 0, outputTokens: 0 }
    let endCall = false
    let transfer: string | null = null
    let digits: string | null = null

    for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
      const step = round === 0 && early ? await early.step : await this.step(model, { ...request, messages }, turn.onText)
      usage.inputTokens += step.usage.inputTokens
      usage.outputTokens += step.usage.outputTokens
      if (step.text.trim()) texts.push(step.text.trim())
      if (!step.toolCalls.length || round === MAX_TOOL_ROUNDS - 1) break
      messages.push({ role: 'assistant', content: step.text, toolCalls: step.toolCalls })
      for (const [i, call] of step.toolCalls.entries()) {
        const outcome =
          i < MAX_CALLS_PER_ROUND
            ? await this.deps.tools.run(call.name, call.arguments, offered, { workspace, agent, conversation, sideEffects })
            : { output: { error: `at most ${MAX_CALLS_PER_ROUND} tool calls at once` } }
        if ('conversation' in outcome && outcome.conversation) conversation = outcome.conversation
        if ('endCall' in outcome && outcome.endCall) endCall = true
        if ('transfer' in outcome && outcome.transfer) transfer = outcome.transfer
        if ('digits' in outcome && outcome.digits) digits = `${digits ?? ''}${outcome.digits}`
        runs.push({ id: call.id, name: call.name, input: call.arguments, output: outcome.output })
        const content = typeof outcome.output === 'string' ? outcome.output : JSON.stringify(outcome.output)
        messages.push({ role: 'tool', content, toolCallId: call.id, name: call.name })
      }
    }

    // Keys pressed into a phone menu may come with nothing to say (the menu is talking): no apology
    // is spoken then, and the stored reply reads as the keys.
    const reply = texts.join(' ').trim() || (digits ? '' : NO_REPLY)
    // A chat reply and its event commit together: a crash never keeps one without the other.
    const completed = conversation.channel !== 'voice' ? (message: MessageDoc) => replyCompleted(conversation, message, reply) : undefined
    const saved = await this.deps.conversations.addMessage(
      conversation,
      {
        author: 'agent',
        parts: [{ type: 'text', text: reply || keypadLine(digits ?? '') }],
        extra: { tools: runs, model: agent.model, usage, ...(agent.servedVersion !== undefined ? { agentVersion: agent.servedVersion } : {}) },
        also: turn.replyAlso,
      },
      completed,
    )
    if (metered) await this.chargeReply(workspace, saved.conversation, saved.message)
    return { conversation: saved.conversation, reply, answered: true, tools: runs, endCall, transfer, digits, customerMessage: recorded.message, replyMessage: saved.message }
  }

  /** The model request of a turn: the tools the agent offers on this channel, the system prompt, memory, the customer's words. */
  private prompt(agent: AgentDoc, turn: TurnInput, history: MessageDoc[]) {
    const channel = turn.conversation.channel
    const offered = toolsFor(agent, channel)
    const request: Omit<StreamRequest, 'messages'> = { tools: toolSpecs(offered, agent), temperature: agent.temperature, maxTokens: agent.maxReplyTokens, signal: turn.signal }
    const messages: ChatMessage[] = [{ role: 'system', content: buildSystemPrompt(agent, { channel, tools: offered }) }, ...memoryTurns(history), { role: 'user', content: turn.text }]
    return { offered, request, messages }
  }

  /** The first model call of a reply started early: streams at once (its text reaches `onText`), awaited once released. */
  private firstStep(model: LanguageModel, agent: AgentDoc, turn: TurnInput, history: MessageDoc[]) {
    const prompt = this.prompt(agent, turn, history)
    const step = this.step(model, { ...prompt.request, messages: prompt.messages }, turn.onText)
    step.catch(() => {}) // awaited (or dropped with the turn) later; never an unhandled rejection
    return { ...prompt, step }
  }

  private async step(model: LanguageModel, request: StreamRequest, onText?: (piece: string) => void): Promise<Step> {
    const step: Step = { text: '', toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 } }
    try {
      for await (const ev of model.stream(request)) {
        if (ev.type === 'text') {
          step.text += ev.text
          onText?.(ev.text)
        } else if (ev.type === 'tool_call') step.toolCalls.push({ id: ev.id, name: ev.name, arguments: ev.arguments })
        else if (ev.usage) step.usage = ev.usage
      }
    } catch (err) {
      throw llmFailure(err)
    }
    return step
  }

  /** The allowance when replies are stopped; null while they run. */
  async stoppedReplies(workspace: WorkspaceDoc): Promise<ReplyAllowance | null> {
    const allowance = await this.deps.meter.replyAllowance(workspace)
    return allowance.stopped ? allowance : null
  }

  /** One `reply` record per agent reply (test chats included, docs/spec.md), priced by the plan. */
  private async chargeReply(workspace: WorkspaceDoc, conversation: ConversationDoc, message: MessageDoc): Promise<void> {
    await this.deps.meter.charge({
      id: `use_reply_${message.id}`,
      workspaceId: workspace.id,
      act: { kind: 'reply' },
      refs: { agentId: conversation.agentId, conversationId: conversation.id, messageId: message.id, channel: conversation.channel, test: conversation.test },
    })
  }
}

/** The legacy `chat.message.completed` (docs/spec.md Other events); payload in events/payloads.ts. */
function replyCompleted(conversation: ConversationDoc, message: MessageDoc, text: string): DomainEvent {
  const data: EventPayload<'chat.message.completed'> = {
    conversationId: conversation.id,
    messageId: message.id,
    channel: conversation.channel,
    test: conversation.test,
    ...(conversation.simulated ? { simulated: true as const } : {}),
    text,
    completedAt: message.createdAt,
  }
  return { type: 'chat.message.completed', workspaceId: conversation.workspaceId, agentId: conversation.agentId, data }
}

/** Waits for an early reply's release; a turn aborted first (the caller went on) rejects, having written nothing. */
async function released(hold: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) throw signal.reason ?? new DOMException('the turn was cancelled', 'AbortError')
  await new Promise<void>((resolve, reject) => {
    const abort = () => reject(signal?.reason ?? new DOMException('the turn was cancelled', 'AbortError'))
    signal?.addEventListener('abort', abort, { once: true })
    hold.then(
      () => {
        signal?.removeEventListener('abort', abort)
        resolve()
      },
      (err) => {
        signal?.removeEventListener('abort', abort)
        reject(err)
      },
    )
  })
}

/** 402 for a test chat while replies are stopped (docs/api/billing.md). */
export function repliesStopped(a: ReplyAllowance): Refused {
  const why = a.metered
    ? 'the wallet cannot pay for a reply; top up the balance'
    : `this month's ${a.included} included replies are used up (${a.used} used); replies resume on the 1st (UTC) or after a plan change`
  return notCovered(`replies are stopped: ${why}`, { replies: a })
}
