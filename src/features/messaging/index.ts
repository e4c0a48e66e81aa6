/**
 * Messaging: the chat app (sandbox or WhatsApp), the bot app (sandbox or Telegram) and email on the
 * messaging port — inbound messages to conversations, the agent's answers sent on the platform with
 * their receipts, external agents told through `message.received`, opt-out keywords.
 */

import { randomBytes } from 'node:crypto'
import { SecretBox } from '../../crypto/secrets'
import { OwedWork } from '../../events/owed-work'
import { defineFeature } from '../../kernel/feature'
import { createEmailSender } from '../../providers/email'
import type { MessagingPlatform } from '../../providers/messaging/port'
import { SandboxPlatform } from '../../providers/messaging/sandbox'
import { TelegramPlatform } from '../../providers/messaging/telegram'
import { WhatsAppPlatform } from '../../providers/messaging/whatsapp'
import { WorkspaceCollection } from '../../store/workspace-scoped'
import { agentsRef } from '../agents/public'
import { contactsRef } from '../contacts/public'
import { conversationsRef } from '../conversations/public'
import { phoneNumbersRef } from '../phone-numbers/public'
import { templatesRef } from '../templates/public'
import { usageRef } from '../usage/public'
import { versionsRef } from '../versions/public'
import { webhooksRef } from '../webhooks/public'
import { tenancyRef } from '../workspaces/public'
import { AgentAnswers, type OwedAnswer } from './answers'
import { BotInbound } from './botapp'
import { BotConnections, type BotDoc } from './bots'
import { botsConsole } from './bots-console'
import { messagingConsole, type WebInboundSlot } from './console'
import { EmailInbound } from './email'
import { ReceivedFiles } from './files'
import { InboundMessages } from './inbound'
import { resolveLostDeliveries } from './lost-deliveries'
import { messagingRef } from './public'
import { applyReceipts } from './receipts'
import { Replies } from './reply'
import { replyTransport } from './reply-transport'
import { SmtpListener } from './smtp-listener'
import { MessagingTotals } from './summary'
import { TeammateMessages } from './teammate'
import { telegramWebhook } from './telegram-webhook'
import { chatappSummaryV1, messagingV1 } from './v1'
import { whatsAppWebhook } from './whatsapp-webhook'

export const messagingFeature = defineFeature(messagingRef, {
  async build(kernel, use) {
    const { workspaceRepo } = use(tenancyRef)
    const { agents } = use(agentsRef)
    const { contacts } = use(contactsRef)
    const { numbers } = use(phoneNumbersRef)
    const { conversations, engine } = use(conversationsRef)
    const { meter } = use(usageRef)
    const { outbox } = use(webhooksRef)
    // The email channel's answers go out like webhook emails: SMTP_URL, else the embedded outbox.
    // 30 s: an SMTP server accepts a message in well under that; past it the answer is marked failed.
    const email = createEmailSender(kernel.config, 30_000, { repo: outbox, clock: kernel.clock })
    const { serving } = use(versionsRef)
    const { templates } = use(templatesRef)
    const sandbox = new SandboxPlatform(kernel.clock)
    const files = await ReceivedFiles.open(kernel.store, {
      storage: kernel.files,
      secret: kernel.config.secretKey ?? randomBytes(32).toString('hex'),
      publicBaseUrl: kernel.config.publicBaseUrl,
      clock: kernel.clock,
    })
    conversations.mediaLink = (ref) => files.link(ref)
    kernel.customerHooks.onErased((e) => files.erase(e.customerId), 'received files erased')
    const wa = kernel.config.chatapp.whatsapp
    // Phone-number ids WhatsApp told us in webhooks, beside those configured (WHATSAPP_PHONE_NUMBER_IDS).
    const links = await kernel.store.collection<{ [k: string]: unknown; id: string; phoneNumberId: string }>({ name: 'chatapp_links', indexes: [] })
    const whatsapp =
      kernel.config.chatapp.provider === 'whatsapp' && wa ? new WhatsAppPlatform({ ...wa, phoneNumberId: async (n) => wa.phoneNumberIds[n] ?? (await links.get(n))?.phoneNumberId ?? null }) : null
    const platform: MessagingPlatform = whatsapp ?? sandbox
    // botapp: Telegram bots connected per workspace (tokens sealed), or the sandbox platform.
    const botDocs = await kernel.store.collection<BotDoc>({ name: 'botapp_bots', indexes: [{ name: 'bots_workspace', fields: [['workspaceId', 1]] }] })
    let telegram: TelegramPlatform | null = null
    const bots = new BotConnections({
      bots: new WorkspaceCollection(botDocs),
      agents,
      secrets: new SecretBox(kernel.config.secretKey!),
      telegram: null,
      publicBaseUrl: kernel.config.publicBaseUrl,
      clock: kernel.clock,
      logger: kernel.logger,
    })
    if (kernel.config.botapp.provider === 'telegram') telegram = bots.useTelegram(new TelegramPlatform(kernel.config.botapp.telegramApiUrl, bots.tokenOf))
    const botPlatform: MessagingPlatform = telegram ?? sandbox
    kernel.customerHooks.onErased((e) => bots.erase(e.customerId), 'bots disconnected')
    // Answers on every chat channel, each owed in the store from its message's commit (answers.ts).
    const answers = new AgentAnswers({
      published: (ws, id) => serving.live(ws, id),
      workspace: (id) => workspaceRepo.get(id),
      conversations,
      engine,
      send: replyTransport({ platform, botPlatform, email }),
      clock: kernel.clock,
      logger: kernel.logger,
    })
    const owedAnswers = await OwedWork.open<OwedAnswer>(kernel.store, {
      name: 'owed_answers',
      owner: kernel.runtime.instanceId,
      coordination: kernel.coordination,
      logger: kernel.logger,
      resume: answers.resume,
    })
    answers.owed = owedAnswers
    const emailInbound = new EmailInbound({ agents, conversations, answers })
    const botInbound = new BotInbound({ bots, conversations, answers })
    // Inbound mail over SMTP, when SMTP_LISTEN_PORT is set (docs/api/messaging.md).
    let smtp: SmtpListener | null = null
    if (kernel.config.smtpListenPort !== undefined) {
      smtp = new SmtpListener({ agents, workspace: (id) => workspaceRepo.get(id), email: emailInbound, hostname: new URL(kernel.config.publicBaseUrl).hostname, logger: kernel.logger })
      await smtp.listen(kernel.config.smtpListenPort, kernel.config.host)
    }
    const replies = new Replies({ conversations, numbers, contacts, platform, botPlatform, bots, templates, meter, clock: kernel.clock })
    const inbound = new InboundMessages({ numbers, contacts, conversations, answers, logger: kernel.logger })
    platform.onReceipt(
      applyReceipts({
        byPlatformId: (id) => conversations.byPlatformId(id),
        byId: (id) => conversations.message(id),
        setDelivery: (id, delivery) => conversations.setDelivery(id, delivery),
        logger: kernel.logger,
      }),
    )
    const web: WebInboundSlot = { receive: null, show: null }
    const teammates = new TeammateMessages({ conversations, numbers, contacts, platform, botPlatform, bots, agents, email, web, meter, clock: kernel.clock })
    // Messaging totals; features that send outside conversations (broadcasts) add their sends.
    const totals = new MessagingTotals({ conversations, clock: kernel.clock })
    return {
      services: { inbound, platform, web, sandbox, replies, teammates, files, emailInbound, bots, botInbound, smtp, totals },
      legacy: [files.route()],
      callbacks: [
        ...(telegram ? [telegramWebhook({ platform: telegram, bots, inbound: botInbound, workspace: (id) => workspaceRepo.get(id), files, logger: kernel.logger })] : []),
        ...(whatsapp
          ? [
              whatsAppWebhook({
                platform: whatsapp,
                inbound,
                numbers,
                workspace: (id) => workspaceRepo.get(id),
                learn: async (number, phoneNumberId) => void (phoneNumberId && (await links.upsert({ id: number, phoneNumberId }))),
                files,
                logger: kernel.logger,
              }),
            ]
          : []),
      ],
      v1: [messagingV1({ context: kernel.http.v1, replies, coordination: kernel.coordination, clock: kernel.clock }), chatappSummaryV1({ context: kernel.http.v1, totals })],
      console: [messagingConsole({ auth: kernel.http.console, inbound, email: emailInbound, bots: botInbound, web, teammates }), botsConsole({ auth: kernel.http.console, bots })],
      // Answers stopped instances (this one's earlier lives included) owed are finished here.
      async start() {
        await resolveLostDeliveries({ settings: await kernel.store.collection({ name: 'settings', indexes: [] }), conversations, owed: owedAnswers, clock: kernel.clock, logger: kernel.logger })
        await owedAnswers.start()
      },
      drain: async () => owedAnswers.drain(),
      async stop() {
        await smtp?.close()
        await answers.settled()
        await owedAnswers.stop()
        await email.close()
      },
    }
  },
})
