/**
 * A broadcast's target (kind `chatapp`): the campaign's approved template, personalised per contact,
 * sent through the messaging port from the agent's chat-app number, paced per number. Each message
 * the platform takes is metered as a chat-app message of the template's category (usage/meter.ts),
 * as sequence steps are. A message the account cannot pay for (Free's monthly messages used up, or
 * a wallet below its price) is not sent, and the campaign stops for it (`Unpaid`, sender.ts).
 */
import { type Clock, iso } from '../../clock'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { type MessagingPlatform, PlatformRefused, type Sent } from '../../providers/messaging/port'
import type { Collection } from '../../store/port'
import type { PhoneNumberService } from '../phone-numbers/public'
import type { TemplateDoc, TemplateService } from '../templates/public'
import { cannotPayMessage, type Meter } from '../usage/public'
import type { CampaignOutcomes } from './outcomes'
import type { Pacer } from './pacer'
import { personalise } from './personalise'
import type { CampaignDoc, RecipientDoc } from './repository'
import { type Contact, type Target, Unpaid } from './sender'

/** Why a broadcast stops on an allowance (only Free caps chat-app messages: docs/api/billing.md). */
const MESSAGES_USED_UP = "the plan's chat-app messages for this month are used up"

/** Sends in flight per broadcast: a WhatsApp send answers in ~100–300 ms, so 32 keep its 80/s per number busy. */
const SEND_WINDOW = 32

export interface BroadcastDeps {
  recipients: Collection<RecipientDoc>
  numbers: PhoneNumberService
  templates: TemplateService
  platform: MessagingPlatform
  outcomes: CampaignOutcomes
  meter: Pick<Meter, 'charge' | 'messagesRemaining' | 'messageRefusal' | 'messageBudget'>
  pacer: Pacer
  clock: Clock
}

/** The agent's chat-app number a broadcast goes out from. */
export async function broadcastNumber(numbers: PhoneNumberService, workspaceId: string, agentId: string): Promise<string | null> {
  return (await numbers.list(workspaceId)).find((n) => n.channel === 'chatapp' && n.agentId === agentId)?.number ?? null
}

export async function broadcastTarget(d: BroadcastDeps, campaign: CampaignDoc, workspace: WorkspaceDoc): Promise<Target | string | Unpaid> {
  const number = await broadcastNumber(d.numbers, workspace.id, campaign.agentId)
  if (!number) return 'the agent has no chat-app number to send from any more'
  let template: TemplateDoc
  try {
    // Checked again at every (re)start: a template paused or rejected meanwhile stops the campaign.
    template = await d.templates.forReply(workspace.id, number, campaign.template!, campaign.language ?? undefined)
  } catch (err) {
    return `template "${campaign.template}" cannot be sent: ${(err as Error).message}`
  }
  // The allowance is read once per (re)start and taken from before each send, so the sends in
  // flight together cannot all pass one check (null: the plan does not cap messages).
  let left = await d.meter.messagesRemaining(workspace)
  if (left === 0) return new Unpaid(MESSAGES_USED_UP)
  // The wallet likewise (null: no wallet): read at each (re)start, each send taking its price, so
  // the sends in flight cannot overdraw it together; the gate's wallet (at most a second old) also
  // sees what the account spends elsewhere meanwhile.
  const budget = await d.meter.messageBudget(workspace, template.category)
  if (budget && budget.availableMicro < budget.priceMicro) return new Unpaid(cannotPayMessage(template.category, budget))
  const unpaid = async (r: RecipientDoc, reason: string) => {
    await d.outcomes.write(r.id, () => d.recipients.update(r.id, { status: 'failed', error: `not sent: ${reason}` }))
    return new Unpaid(reason)
  }
  return {
    window: SEND_WINDOW,
    pace: async () => {
      await d.pacer.take(number)
      return () => {}
    },
    async hand(r: RecipientDoc, contact: Contact) {
      if (left !== null && left-- <= 0) return unpaid(r, MESSAGES_USED_UP)
      if (budget) {
        // Taken before any await, so two sends in flight never both take the last of it.
        const short = budget.availableMicro < budget.priceMicro ? cannotPayMessage(template.category, budget) : null
        if (!short) budget.availableMicro -= budget.priceMicro
        const refusal = short ?? (await d.meter.messageRefusal(workspace, template.category))
        if (refusal) {
          if (!short) budget.availableMicro += budget.priceMicro
          return unpaid(r, refusal)
        }
      }
      let sent: Sent
      try {
        const variables = personalise(template, contact)
        sent = await d.platform.send({ from: number, to: r.phone, content: { type: 'template', template: { name: template.name, language: template.language, variables } } })
      } catch (err) {
        if (left !== null) left++ // not sent: not counted
        if (budget) budget.availableMicro += budget.priceMicro
        const code = err instanceof PlatformRefused && err.code ? err.code : null
        const refusal = { errorCode: code ?? 'refused', refusedAt: iso(d.clock.now()), category: template.category }
        await d.outcomes.write(r.id, () => d.recipients.update(r.id, { status: 'failed', error: `the platform refused it: ${(err as Error).message}${code ? ` (${code})` : ''}`, ...refusal }))
        return 'refused'
      }
      const at = iso(d.clock.now())
      await d.outcomes.sent(r.id, sent.platformMessageId, { sentAt: at, category: template.category })
      await d.meter.charge({
        id: `use_msg_${campaign.id}_${r.id}`,
        workspaceId: workspace.id,
        act: { kind: 'message', category: template.category },
        refs: { campaignId: campaign.id, recipientId: r.id, platformMessageId: sent.platformMessageId },
        at: Date.parse(at),
      })
      return 'handed'
    },
  }
}
