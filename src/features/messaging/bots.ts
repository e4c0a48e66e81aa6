/**
 * Bots on the `botapp` channel (Telegram): a workspace connects a bot to one of its agents with the
 * bot's token (console `PUT /console/workspaces/{ws}/botapp`). With `BOTAPP_PROVIDER=telegram` the
 * token is checked with `getMe` (a token Telegram refuses is not kept) and our webhook is set with a
 * fresh secret Telegram echoes on every update; with the sandbox the token's shape is checked and the
 * bot id is the number before its colon (as in every real token). Token and secret are sealed at rest
 * and never shown again; one bot belongs to one workspace.
 */
import { randomBytes } from 'node:crypto'
import { type Clock, iso } from '../../clock'
import type { SecretBox } from '../../crypto/secrets'
import type { Logger } from '../../logger'
import { TelegramError, type TelegramPlatform, TOKEN_SHAPE } from '../../providers/messaging/telegram'
import { clashes, invalid, notThere, upstreamFailed } from '../../refusals'
import type { WorkspaceCollection } from '../../store/workspace-scoped'
import type { AgentService } from '../agents/public'

export interface BotDoc {
  [k: string]: unknown
  /** Telegram's id of the bot. */
  id: string
  workspaceId: string
  agentId: string
  username: string
  token: string
  secret: string
  /** On: the developer answers (`message.received`, then `POST /conversations/{id}/reply`). */
  externalAgents: boolean
  connectedAt: string
  createdAt: string
}

export interface BotView {
  bot: string
  username: string
  agent: string
  externalAgents: boolean
  tokenLast4: string
  connectedAt: string
}

export class BotConnections {
  constructor(
    private readonly d: {
      bots: WorkspaceCollection<BotDoc>
      agents: AgentService
      secrets: SecretBox
      /** Null: the sandbox (no Telegram to ask); set by useTelegram. */
      telegram: TelegramPlatform | null
      publicBaseUrl: string
      clock: Clock
      logger: Logger
    },
  ) {}

  /** The platform needs this service's tokens, and this service the platform: tied after both exist. */
  useTelegram(platform: TelegramPlatform): TelegramPlatform {
    this.d.telegram = platform
    return platform
  }

  async connect(workspaceId: string, input: { agent: string; token: string; externalAgents?: boolean }): Promise<BotView> {
    const d = this.d
    const token = input.token.trim()
    const shape = TOKEN_SHAPE.exec(token)
    if (!shape) throw invalid('token', 'is not a bot token (BotFather gives "123456789:AA…")')
    const agent = await d.agents.get(workspaceId, input.agent).catch(() => null)
    if (!agent) throw notThere(`no agent ${input.agent} in this workspace`)
    const secret = randomBytes(32).toString('base64url') // Telegram allows 1–256 of A-Z a-z 0-9 _ -
    let identity = { id: shape[1]!, username: `sandbox_${shape[1]}_bot` }
    if (d.telegram) {
      const api = d.telegram.api(token)
      try {
        identity = await api.getMe()
        // A bot id is Telegram's, one for all workspaces: held by another one is a conflict, not a 404.
        const held = await d.bots.acrossWorkspaces.get(identity.id)
        if (held && held.workspaceId !== workspaceId) throw clashes(`bot @${identity.username} is connected to another workspace`)
        await api.setWebhook(`${d.publicBaseUrl.replace(/\/$/, '')}/messaging/telegram/webhook/${identity.id}`, secret)
      } catch (err) {
        if (!(err instanceof TelegramError)) throw err
        if (err.status === 401 || err.status === 404) throw invalid('token', `Telegram refused this token (${err.message}); nothing was saved`)
        throw upstreamFailed(`Telegram did not accept the bot: ${err.message}; nothing was saved`, { code: err.code })
      }
    }
    const held = await d.bots.acrossWorkspaces.get(identity.id)
    if (held && held.workspaceId !== workspaceId) throw clashes(`bot @${identity.username} is connected to another workspace`)
    const now = iso(d.clock.now())
    const doc: BotDoc = {
      id: identity.id,
      workspaceId,
      agentId: agent.id,
      username: identity.username,
      token: d.secrets.seal(token),
      secret: d.secrets.seal(secret),
      externalAgents: input.externalAgents ?? held?.externalAgents ?? false,
      connectedAt: now,
      createdAt: held?.createdAt ?? now,
    }
    await d.bots.acrossWorkspaces.upsert(doc)
    return this.view(doc, token)
  }

  async list(workspaceId: string): Promise<BotView[]> {
    const docs = await this.d.bots.in(workspaceId).find({}, { sort: [['createdAt', 1]] })
    return docs.map((doc) => this.view(doc, this.d.secrets.open(doc.token)))
  }

  /** The bot, when it is this workspace's. */
  async get(workspaceId: string, botId: string): Promise<BotDoc> {
    const doc = await this.inWorkspace(workspaceId, botId)
    if (!doc) throw notThere(`no bot ${botId} in this workspace`)
    return doc
  }

  /** The bot when it is connected to this workspace; null when it is not (or to another one). */
  inWorkspace(workspaceId: string, botId: string): Promise<BotDoc | null> {
    return this.d.bots.in(workspaceId).get(botId)
  }

  /** Whichever workspace holds it (webhooks arrive by bot id). */
  byId(botId: string): Promise<BotDoc | null> {
    return this.d.bots.acrossWorkspaces.get(botId)
  }

  async only(workspaceId: string): Promise<BotDoc> {
    const docs = await this.d.bots.in(workspaceId).find({}, { limit: 2 })
    if (docs.length !== 1) throw invalid('to', docs.length ? 'the workspace has several bots: say which one (its id)' : 'the workspace has no bot: connect one first')
    return docs[0]!
  }

  tokenOf = async (botId: string): Promise<string | null> => {
    const doc = await this.d.bots.acrossWorkspaces.get(botId)
    return doc ? this.d.secrets.open(doc.token) : null
  }

  secretOf(doc: BotDoc): string {
    return this.d.secrets.open(doc.secret)
  }

  /** Telegram stops calling us first; a token revoked meanwhile does not keep the bot connected. */
  async disconnect(workspaceId: string, botId: string): Promise<{ ok: true }> {
    const doc = await this.get(workspaceId, botId)
    if (this.d.telegram) {
      await this.d.telegram
        .api(this.d.secrets.open(doc.token))
        .deleteWebhook()
        .catch((err) => this.d.logger.warn({ err: (err as Error).message, bot: botId }, 'Telegram did not remove the webhook of a bot being disconnected'))
    }
    await this.d.bots.in(workspaceId).delete(botId)
    return { ok: true }
  }

  async erase(workspaceId: string): Promise<void> {
    await this.d.bots.in(workspaceId).deleteMany()
  }

  private view(doc: BotDoc, token: string): BotView {
    return { bot: doc.id, username: doc.username, agent: doc.agentId, externalAgents: doc.externalAgents, tokenLast4: token.slice(-4), connectedAt: doc.connectedAt }
  }
}
