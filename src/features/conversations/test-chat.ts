/**
 * Test chat (docs/spec.md Agents, test chat rules): the real agent — same instructions, model,
 * knowledge and actions as website chat — with outward side effects switched off. A test chat is
 * a conversation on channel `web` flagged `test: true`, so it shows in the inbox and its replies
 * count toward the message allowance. The `session` is that conversation's id.
 *
 * The publication rule (an agent never published cannot be talked to) does not apply here:
 * testing before publishing is the point.
 *
 * The agent's model is resolved before anything is written (conversation, message, pacing hit):
 * a turn refused for its model (503, no provider key) leaves no empty conversation to show in the
 * inbox or count in analytics. A provider that fails mid-turn (timeout, outage: 502/503) does so
 * after the customer's message is recorded; that message stays, without a reply.
 */
import type { Clock } from '../../clock'
import type { Coordination, RateHit } from '../../coordination/port'
import { rateLimited } from '../../http/rate-limit'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { clashes, invalid, notThere, type Refused } from '../../refusals'
import type { AgentService } from '../agents/public'
import { type ConversationEngine, repliesStopped } from './engine'
import type { ConversationDoc } from './model'
import type { ModelResolver } from './model-resolver'
import type { ConversationService } from './service'

/** docs/spec.md Limits: test chat message 4,000 characters. */
export const TEST_CHAT_MESSAGE_MAX = 4_000

/**
 * "Messages sent faster than a person could type" (docs/spec.md Errors), as two fixed windows counted
 * in the coordination store (so every instance sees the same counts), on the service clock:
 * - one message per session per SESSION_WINDOW_MS (1 s): reading even a one-line reply and
 *   typing "ok" takes a person well over a second (reaction ~0.25 s, then keys and Enter);
 * - AGENT_LIMIT (20) messages per agent per AGENT_WINDOW_MS (10 s) across all its test sessions:
 *   a fast typist manages ~10 characters a second (120 words a minute), so one person sends at
 *   most ~5 short messages in 10 s; 20 leaves room for four people testing at once, and stops a
 *   script that opens a new session for every message.
 */
export const SESSION_WINDOW_MS = 1_000
export const AGENT_LIMIT = 20
export const AGENT_WINDOW_MS = 10_000

export interface TestChatAnswer {
  session: string
  reply: string
  tools: { name: string; input: Record<string, unknown>; output: unknown }[]
}

export interface TestChatDeps {
  agents: AgentService
  conversations: ConversationService
  engine: ConversationEngine
  models: ModelResolver
  coordination: Coordination
  clock: Clock
}

export class TestChatService {
  constructor(private readonly deps: TestChatDeps) {}

  async send(workspace: WorkspaceDoc, agentId: string, input: { message: string; session?: string }): Promise<TestChatAnswer> {
    const text = input.message.trim()
    if (!text) throw invalid('message', 'must not be blank')
    const agent = await this.deps.agents.get(workspace.id, agentId)
    if (!agent.widget.enabled) {
      throw clashes(`website chat is switched off for agent ${agent.id} (widget.enabled is false); turn it on to use test chat`)
    }
    let conversation = input.session !== undefined ? await this.session(workspace.id, agent.id, input.session) : null
    const model = await this.deps.models.resolve(workspace, agent)
    // Refused before anything is written, like a model that cannot run.
    const stopped = await this.deps.engine.stoppedReplies(workspace)
    if (stopped) throw repliesStopped(stopped)
    await this.pace(workspace.id, agent.id, conversation?.id ?? null)
    if (!conversation) {
      conversation = await this.deps.conversations.start({ workspaceId: workspace.id, agentId: agent.id, channel: 'web', test: true })
      // The first message opens the session's window, so a second one right behind it is paced too.
      await this.sessionHit(conversation.id)
    }
    const result = await this.deps.engine.respond({ workspace, agent, conversation, model, text, sideEffects: 'simulated' })
    // A delete of the agent may have begun during the model call (seconds): its cascade ran
    // before or after our writes. AgentService marks the agent first, so asking now and sweeping
    // again leaves nothing of this turn behind either way.
    if (!(await this.deps.agents.exists(workspace.id, agent.id))) {
      await this.deps.conversations.removeAllForAgent(workspace.id, agent.id)
      throw notThere(`no agent ${agent.id} in this workspace`)
    }
    return {
      session: conversation.id,
      reply: result.reply,
      tools: result.tools.map((t) => ({ name: t.name, input: t.input, output: t.output })),
    }
  }

  /** Only a test chat of this agent in this workspace continues; anything else is the caller's mistake. */
  private async session(workspaceId: string, agentId: string, session: string): Promise<ConversationDoc> {
    const doc = session.startsWith('conv_') ? await this.deps.conversations.findIn(workspaceId, session) : null
    if (!doc || doc.agentId !== agentId || !doc.test) {
      throw invalid('session', 'is not a session from a test chat of this agent; omit it to start a new one')
    }
    return doc
  }

  private sessionHit(conversationId: string): Promise<RateHit> {
    return this.deps.coordination.rateHit(`test-chat:session:${conversationId}`, 1, SESSION_WINDOW_MS, this.deps.clock.now())
  }

  private async pace(workspaceId: string, agentId: string, conversationId: string | null): Promise<void> {
    const now = this.deps.clock.now()
    if (conversationId) {
      const hit = await this.sessionHit(conversationId)
      if (!hit.allowed) throw tooFast(hit, now, 'one message a second in a test chat session')
    }
    const hit = await this.deps.coordination.rateHit(`test-chat:agent:${workspaceId}:${agentId}`, AGENT_LIMIT, AGENT_WINDOW_MS, now)
    if (!hit.allowed) throw tooFast(hit, now, `${AGENT_LIMIT} test chat messages per agent every ${AGENT_WINDOW_MS / 1000} seconds`)
  }
}

/** The 429 with the rule it broke, `Retry-After` and the `X-RateLimit-*` headers of that rule. */
function tooFast(hit: RateHit, now: number, rule: string): Refused {
  return rateLimited(
    hit,
    now,
    (seconds) => `messages are arriving faster than a person could type (${rule}); retry in ${seconds} s`,
    (retryAfter) => ({ retryAfter }),
  )
}
