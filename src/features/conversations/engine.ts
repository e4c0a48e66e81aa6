/**
 * The conversation engine: one customer message in, one agent reply out. The same engine serves
 * test chat now and web chat, messaging and voice later (the voice pipeline passes `onText` to
 * speak sentences while the rest is generated, and reads `endCall`).
 *
 * A turn: pick the model (ModelResolver) → read memory → record the customer message → loop
 * model → tool calls → tool results → model, at most MAX_TOOL_ROUNDS times → record the reply
 * with the tools it used → count the reply in the usage ledger → publish `chat.message.completed`
 * (chats only: a spoken reply on a call is not a chat message; the call has its own events).
 *
 * Nothing is written until the model is resolved, so a turn refused for its model (503, no
 * provider key) leaves no trace. A provider failure mid-turn (timeout, outage) happens after the
 * customer's message is recorded: that message stays, without a reply, as it would in any inbox.
 */
import { iso, type Clock } from '../../clock'
import type { EventBus } from '../../events/bus'
import type { EventPayload } from '../../events/payloads'
import { newId } from '../../ids'
import type { ChatMessage, LanguageModel, StreamRequest, ToolCall } from '../../providers/llm'
import type { AgentDoc } from '../agents'
import type { UsageLedger } from '../usage'
import type { WorkspaceDoc } from '../workspaces'
import { llmFailure } from './llm-failure'
import { MEMORY_MESSAGES, memoryTurns } from './memory'
import type { ConversationDoc, MessageDoc, ToolRun } from './model'
import type { ModelResolver } from './model-resolver'
import { buildSystemPrompt } from './prompt'
import type { ConversationService } from './service'
import type { SideEffects, ToolRunner } from './tool-runner'
import { toolsFor, toolSpecs } from './tools'

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
  ledger: UsageLedger
  clock: Clock
  bus: EventBus
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
  /** Called with each piece of reply text as the model streams it. */
  onText?: (piece: string) => void
  signal?: AbortSignal
}

export interface TurnResult {
  conversation: ConversationDoc
  /** '' when the agent stays quiet because a teammate has taken the conversation over. */
  reply: string
  answered: boolean
  tools: ToolRun[]
  endCall: boolean
  customerMessage: MessageDoc
  replyMessage: MessageDoc | null
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
    const history = (await this.deps.conversations.history(turn.conversation.id, MEMORY_MESSAGES + 1)).filter((m) => m.id !== turn.recorded?.message.id).slice(-MEMORY_MESSAGES)
    const recorded = turn.recorded ?? (await this.deps.conversations.addMessage(turn.conversation, { author: 'customer', parts: [{ type: 'text', text: turn.text }] }))
    let conversation = recorded.conversation
    if (conversation.status === 'handled') {
      return { conversation, reply: '', answered: false, tools: [], endCall: false, customerMessage: recorded.message, replyMessage: null }
    }

    const offered = toolsFor(agent, conversation.channel)
    const request: Omit<StreamRequest, 'messages'> = {
      tools: toolSpecs(offered),
      temperature: agent.temperature,
      maxTokens: agent.maxReplyTokens,
      signal: turn.signal,
    }
    const messages: ChatMessage[] = [
      { role: 'system', content: buildSystemPrompt(agent, { channel: conversation.channel, tools: offered }) },
      ...memoryTurns(history),
      { role: 'user', content: turn.text },
    ]
    const runs: ToolRun[] = []
    const texts: string[] = []
    const usage = { inputTokens: 0, outputTokens: 0 }
    let endCall = false

    for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
      const step = await this.step(model, { ...request, messages }, turn.onText)
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
        runs.push({ id: call.id, name: call.name, input: call.arguments, output: outcome.output })
        const content = typeof outcome.output === 'string' ? outcome.output : JSON.stringify(outcome.output)
        messages.push({ role: 'tool', content, toolCallId: call.id, name: call.name })
      }
    }

    const reply = texts.join(' ').trim() || NO_REPLY
    const saved = await this.deps.conversations.addMessage(conversation, {
      author: 'agent',
      parts: [{ type: 'text', text: reply }],
      extra: { tools: runs, model: agent.model, usage },
    })
    await this.countReply(workspace, saved.conversation)
    if (saved.conversation.channel !== 'voice') await this.publishCompleted(saved.conversation, saved.message, reply)
    return { conversation: saved.conversation, reply, answered: true, tools: runs, endCall, customerMessage: recorded.message, replyMessage: saved.message }
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

  /** The legacy `chat.message.completed` (SPEC.md Other events); payload in events/payloads.ts. */
  private async publishCompleted(conversation: ConversationDoc, message: MessageDoc, text: string): Promise<void> {
    const data: EventPayload<'chat.message.completed'> = {
      conversationId: conversation.id,
      messageId: message.id,
      channel: conversation.channel,
      test: conversation.test,
      text,
      completedAt: message.createdAt,
    }
    await this.deps.bus.publish({ type: 'chat.message.completed', workspaceId: conversation.workspaceId, agentId: conversation.agentId, data })
  }

  /**
   * One `reply` record per agent reply: what the message allowance and usage count (test chats
   * included, SPEC.md). Its price is 0 until plan pricing lands with the usage feature.
   */
  private async countReply(workspace: WorkspaceDoc, conversation: ConversationDoc): Promise<void> {
    await this.deps.ledger.records.insert({
      id: newId('use'),
      workspaceId: workspace.id,
      developerId: workspace.parentId ?? workspace.id,
      kind: 'reply',
      quantity: 1,
      costMicro: 0,
      agentId: conversation.agentId,
      conversationId: conversation.id,
      test: conversation.test,
      createdAt: iso(this.deps.clock.now()),
    })
  }
}
