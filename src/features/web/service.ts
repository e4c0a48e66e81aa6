/**
 * Website chat: the visitor API's rules, with no Elysia types. A visitor reaches an
 * agent by its public `webKey`; the agent answering is the published one (versions' serving seam)
 * with every action live, through the same conversation engine as every channel. A disabled
 * widget or an unpublished agent is refused with the reason; conversations land in the inbox on
 * channel `web`, one per visitor and agent; a conversation a teammate took over gets no reply.
 */
import { SerialQueue } from '../../../actors/serial-queue'
import type { Clock } from '../../clock'
import type { Coordination } from '../../coordination/port'
import { countRequest } from '../../http/rate-limit'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Logger } from '../../logger'
import { clashes, gone, invalid, isRefused, notThere, unrecognised } from '../../refusals'
import type { AgentDoc, AgentService } from '../agents/public'
import type { ConversationDoc, ConversationFeature, MessageDoc } from '../conversations/public'
import { addressSessions, RESUME_MESSAGES, WEB_MESSAGE_MAX, WEB_RATES } from './limits'
import { type VisitorSessions, visitorThread } from './sessions'

type Recorded = Awaited<ReturnType<ConversationFeature['conversations']['addMessage']>>

export interface WebChatDeps {
  agents: AgentService
  served: (workspaceId: string, agentId: string) => Promise<AgentDoc>
  workspace: (id: string) => Promise<WorkspaceDoc | null>
  conversations: ConversationFeature['conversations']
  engine: ConversationFeature['engine']
  models: ConversationFeature['models']
  tools: ConversationFeature['tools']
  coordination: Coordination
  clock: Clock
  sessions: VisitorSessions
  logger: Logger
  /** New sessions a client address may start on one widget a minute (0: no limit). */
  sessionsPerAddress: number
  /** Starts a browser call answered by the agent (the calls feature). */
  startCall: (workspace: WorkspaceDoc, agent: AgentDoc) => Promise<{ callId: string; mediaPath: string }>
}

/** Where a widget's visitor stands: the agent as published, its workspace, and the visitor. */
export interface Visitor {
  workspace: WorkspaceDoc
  /** The agent as published (what the visitor talks to). */
  agent: AgentDoc
  visitorId: string
}

/** A message accepted for an answer: run `answer` to stream the reply (or learn that a person has it). */
export interface Accepted {
  conversationId: string
  messageId: string
  receivedAt: string
  /** False when a teammate has taken the conversation over: the agent stays quiet. */
  answering: boolean
  /** `unavailable`: the agent did not answer because the account cannot pay for replies. */
  answer(onText: (piece: string) => void): Promise<{ messageId: string | null; text: string; unavailable?: true }>
}

/**
 * How long a widget key's published agent is reused before it is read again: 1 s. Every message
 * otherwise re-reads the agent, its workspace and its published snapshot (a fifth of the CPU a
 * message costs, bench:web); a second is shorter than any person notices after publishing or
 * switching the widget off, and edits made in this process drop the entry at once.
 */
export const WIDGET_CACHE_MS = 1_000

type Widget = { workspace: WorkspaceDoc; agent: AgentDoc; draft: AgentDoc }

/** What a website visitor is told when the widget cannot be used (unpublished, switched off) or the agent cannot be paid for a reply. */
export const UNAVAILABLE = 'this chat is not available right now'

export class WebChat {
  private readonly threads = new SerialQueue()
  private readonly running = new Set<Promise<unknown>>()
  private readonly widgets = new Map<string, { at: number; widget: Widget }>()

  constructor(private readonly d: WebChatDeps) {
    const forget = async (agent: AgentDoc) => void this.widgets.delete(agent.webKey)
    d.agents.onPatch(forget)
    d.agents.onDelete(forget)
  }

  /**
   * The published agent behind a widget key, for a website visitor: refused when the widget
   * cannot be used. A visitor is told only that the chat is not available (the agent id and how
   * to publish are for the site's developer): the reason goes to the log.
   */
  async widget(webKey: string): Promise<Widget> {
    try {
      return await this.resolve(webKey)
    } catch (err) {
      if (!isRefused(err, 'conflict')) throw err
      this.d.logger.warn({ webKey, reason: err.message }, 'website chat refused a visitor')
      throw clashes(UNAVAILABLE, err.details)
    }
  }

  /** Whether a widget key names an agent (the chat page answers 404 for one that does not). */
  async exists(webKey: string): Promise<boolean> {
    const draft = await this.d.agents.byWebKey(webKey)
    return draft !== null && (await this.d.workspace(draft.workspaceId)) !== null
  }

  /** The same, refusing with the reason in full (for the console). */
  private async resolve(webKey: string): Promise<Widget> {
    // Wall time on purpose: a process-local cache, not a rule of the service clock.
    const now = performance.now()
    const hit = this.widgets.get(webKey)
    if (hit && now - hit.at < WIDGET_CACHE_MS) return hit.widget
    const widget = await this.load(webKey)
    if (this.widgets.size > 10_000) this.widgets.clear() // bounded: one entry per widget chatting this second
    this.widgets.set(webKey, { at: now, widget })
    return widget
  }

  private async load(webKey: string): Promise<Widget> {
    const draft = await this.d.agents.byWebKey(webKey)
    const workspace = draft ? await this.d.workspace(draft.workspaceId) : null
    if (!draft || !workspace) throw notThere(`no website widget with the key ${webKey}`)
    if (workspace.status !== 'active') throw gone('this website chat is closed: its workspace was deleted')
    // The switch acts at once (the draft's), and a published version with the widget off stays off.
    if (!draft.widget.enabled) throw clashes('website chat is switched off for this agent (widget.enabled is false)', { state: 'disabled' })
    const agent = await this.d.served(workspace.id, draft.id)
    if (!agent.widget.enabled) throw clashes('website chat is switched off in the published version of this agent', { state: 'disabled' })
    return { workspace, agent, draft }
  }

  /** Starts a visitor session, or resumes the one given (with the conversation so far). */
  async session(
    webKey: string,
    token: string | undefined,
    headers: Record<string, unknown>,
    client: string,
  ): Promise<{ resumed: boolean; session: string; conversationId: string | null; messages: MessageDoc[] }> {
    const { workspace, agent } = await this.widget(webKey)
    const visitorId = token ? this.d.sessions.verify(agent.id, token) : null
    if (token && !visitorId) throw unrecognised('session: not a session of this widget; start a new one (omit session)', { field: 'session' })
    if (visitorId && token) {
      const conversation = await this.find(workspace.id, agent.id, visitorId)
      const messages = conversation ? await this.d.conversations.history(conversation.id, RESUME_MESSAGES) : []
      return { resumed: true, session: token, conversationId: conversation?.id ?? null, messages }
    }
    // The address first: one script past its share never uses up the key's budget for the site's visitors.
    if (this.d.sessionsPerAddress > 0) await countRequest(this.d.coordination, addressSessions(this.d.sessionsPerAddress), `${webKey}:${client}`, this.d.clock.now(), headers)
    await countRequest(this.d.coordination, WEB_RATES.keySessions, webKey, this.d.clock.now(), headers)
    const issued = this.d.sessions.issue(agent.id)
    return { resumed: false, session: issued.token, conversationId: null, messages: [] }
  }

  /** The visitor a session token names, on this widget. */
  async visitor(webKey: string, token: string): Promise<Visitor> {
    const { workspace, agent } = await this.widget(webKey)
    const visitorId = this.d.sessions.verify(agent.id, token)
    if (!visitorId) throw unrecognised('session: not a session of this widget; start a new one', { field: 'session' })
    return { workspace, agent, visitorId }
  }

  /**
   * Records the visitor's message and hands back how to answer it. Everything that can refuse
   * (rates, the model's provider key) runs before anything is written. `field`: the body field
   * the message came in (`message` on the widget, `text` on the console's inbound).
   */
  async send(v: Visitor, webKey: string, message: string, headers: Record<string, unknown>, field = 'message'): Promise<Accepted> {
    const text = message.trim()
    if (!text) throw invalid(field, 'must not be blank')
    if (text.length > WEB_MESSAGE_MAX) throw invalid(field, `must be at most ${WEB_MESSAGE_MAX} characters`)
    await this.pace(v, webKey, headers)
    const model = await this.d.models.resolve(v.workspace, v.agent)
    const thread = visitorThread(v.agent.id, v.visitorId)
    // One visitor's messages are stored and answered in order (two tabs writing at once).
    const recorded = await this.threads.run(thread, async () => this.d.conversations.addMessage(await this.open(v), { author: 'customer', parts: [{ type: 'text', text }] }))
    const answering = recorded.conversation.status !== 'handled'
    return {
      conversationId: recorded.conversation.id,
      messageId: recorded.message.id,
      receivedAt: recorded.message.createdAt,
      answering,
      answer: (onText) => this.track(this.threads.run(thread, () => this.reply(v, recorded, text, model, onText))),
    }
  }

  /**
   * The call button: a voice call on the `web` surface, answered by the published agent; the
   * browser streams over the media bridge at `mediaPath`. Paced like a message.
   */
  async call(v: Visitor, webKey: string, headers: Record<string, unknown>): Promise<{ callId: string; mediaPath: string }> {
    if (!v.agent.voice.answersCalls) throw clashes('this agent does not take calls (voice.answersCalls is false)', { state: 'no_calls' })
    await this.pace(v, webKey, headers)
    return this.d.startCall(v.workspace, v.agent)
  }

  /** A message or a call counts once for the visitor and once for the widget key (WEB_RATES). */
  private async pace(v: Visitor, webKey: string, headers: Record<string, unknown>): Promise<void> {
    const now = this.d.clock.now()
    await countRequest(this.d.coordination, WEB_RATES.visitorMessages, `${v.agent.id}:${v.visitorId}`, now, headers)
    await countRequest(this.d.coordination, WEB_RATES.keyMessages, webKey, now, headers)
  }

  /** The welcome form's details: a real `lead.captured` for the visitor's conversation (opened if new). */
  async lead(v: Visitor, input: { name?: string; email?: string; phone?: string }): Promise<{ conversationId: string; name: string | null; email: string | null; phone: string | null }> {
    const given = { name: input.name?.trim() || undefined, email: input.email?.trim() || undefined, phone: input.phone?.trim() || undefined }
    if (!given.name && !given.email && !given.phone) throw invalid('name', 'give at least a name, an email or a phone number')
    if (given.email && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(given.email)) throw invalid('email', `"${given.email}" is not an email address`)
    if (given.phone && given.phone.replace(/\D/g, '').length < 6) throw invalid('phone', `"${given.phone}" is not a phone number`)
    const conversation = await this.threads.run(visitorThread(v.agent.id, v.visitorId), () => this.open(v))
    const outcome = await this.d.tools.run('capture_lead', { ...given, note: 'website widget welcome form' }, ['capture_lead'], {
      workspace: v.workspace,
      agent: v.agent,
      conversation,
      sideEffects: 'live',
    })
    const out = outcome.output as { captured?: boolean; name: string | null; email: string | null; phone: string | null; error?: string }
    if (!out.captured) throw invalid('name', out.error ?? 'the details could not be taken')
    // A note for the team (never shown to the model) of who wrote in, beside the event.
    const who = [out.name, out.email, out.phone].filter(Boolean).join(', ')
    await this.d.conversations.addMessage(conversation, { author: 'customer', internal: true, parts: [{ type: 'text', text: `Welcome form: ${who}` }] })
    return { conversationId: conversation.id, name: out.name, email: out.email, phone: out.phone }
  }

  /**
   * The console's `inbound` with `channel: web` (docs/design.md): a message as if visitor `from` wrote on
   * the widget of agent `to` (default the workspace's only agent); the reply is written in the
   * background (the visitor would read it on resuming). Same rules as the widget.
   */
  async consoleInbound(workspace: WorkspaceDoc, input: { from: string; to: string | null; text: string }): Promise<{ conversationId: string; messageId: string; receivedAt: string }> {
    const visitorId = input.from.trim()
    if (!/^[A-Za-z0-9_-]{1,40}$/.test(visitorId)) throw invalid('from', 'a visitor id: 1–40 letters, digits, - or _')
    const draft = await this.d.agents.addressed(workspace.id, input.to)
    const { agent } = await this.resolve(draft.webKey)
    const accepted = await this.send({ workspace, agent, visitorId }, draft.webKey, input.text, {}, 'text')
    if (accepted.answering) {
      void accepted.answer(() => {}).catch((err) => this.d.logger.warn({ err, conversation: accepted.conversationId }, 'the agent could not answer a website message'))
    }
    return { conversationId: accepted.conversationId, messageId: accepted.messageId, receivedAt: accepted.receivedAt }
  }

  /**
   * A simulations run's visitor (docs/api/simulations.md): `text` written on the widget by
   * `visitorId` to `agent` as the run targets it (the draft or a version, not only the published
   * one), recorded and answered by the same steps as a visitor's message — the visitor's thread,
   * one conversation per visitor and agent, the conversation engine. What differs is what a test
   * needs: the conversation is a test one marked simulated (never billed, out of analytics), tools
   * run as in test chat, and no visitor rate applies (a run is not a person typing).
   */
  async simulated(workspace: WorkspaceDoc, agent: AgentDoc, visitorId: string, message: string): Promise<{ conversationId: string; reply: string }> {
    const text = message.trim()
    if (!agent.widget.enabled) throw clashes('website chat is switched off for this agent (widget.enabled is false)', { state: 'disabled' })
    if (!text || text.length > WEB_MESSAGE_MAX) throw invalid('message', `must be 1–${WEB_MESSAGE_MAX} characters`)
    const model = await this.d.models.resolve(workspace, agent)
    const thread = visitorThread(agent.id, visitorId)
    const open = () => this.d.conversations.thread({ workspaceId: workspace.id, agentId: agent.id, channel: 'web', customer: { id: null, phone: null }, thread, test: true, simulated: true })
    const recorded = await this.threads.run(thread, async () => this.d.conversations.addMessage(await open(), { author: 'customer', parts: [{ type: 'text', text }] }))
    const turn = await this.track(this.threads.run(thread, () => this.d.engine.respond({ workspace, agent, conversation: recorded.conversation, model, text, recorded, sideEffects: 'simulated' })))
    return { conversationId: recorded.conversation.id, reply: turn.reply }
  }

  /** Resolves once every reply under way has been written (tests and shutdown). */
  async settled(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running])
  }

  private async reply(
    v: Visitor,
    recorded: Recorded,
    text: string,
    model: Awaited<ReturnType<WebChatDeps['models']['resolve']>>,
    onText: (piece: string) => void,
  ): Promise<{ messageId: string | null; text: string; unavailable?: true }> {
    const turn = await this.d.engine.respond({ workspace: v.workspace, agent: v.agent, conversation: recorded.conversation, model, text, recorded, sideEffects: 'live', onText })
    // The reason (money) is the developer's: the engine logged it and escalated with it.
    if (turn.refused) return { messageId: null, text: '', unavailable: true }
    return { messageId: turn.replyMessage?.id ?? null, text: turn.reply }
  }

  private track<T>(p: Promise<T>): Promise<T> {
    const tracked: Promise<unknown> = p
      .then(
        () => {},
        () => {},
      )
      .finally(() => this.running.delete(tracked))
    this.running.add(tracked)
    return p
  }

  private find(workspaceId: string, agentId: string, visitorId: string): Promise<ConversationDoc | null> {
    return this.d.conversations.byThread(workspaceId, visitorThread(agentId, visitorId))
  }

  private open(v: Visitor): Promise<ConversationDoc> {
    return this.d.conversations.thread({ workspaceId: v.workspace.id, agentId: v.agent.id, channel: 'web', customer: { id: null, phone: null }, thread: visitorThread(v.agent.id, v.visitorId) })
  }
}
