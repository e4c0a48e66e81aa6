/**
 * Campaigns: broadcasts (a template to every recipient on the chat app) and calling campaigns (a
 * call to every recipient), each campaign an actor (machines/campaign.ts, actor.ts)
 * whose `sending` state runs the sender; progress lives on one row per recipient.
 */
import { defineFeature, eraseCollections } from '../../kernel/feature'
import { agentsRef } from '../agents/public'
import { callsRef } from '../calls/public'
import { contactsRef } from '../contacts/public'
import { messagingRef } from '../messaging/public'
import { notificationsRef } from '../notifications/public'
import { phoneNumbersRef } from '../phone-numbers/public'
import { templatesRef } from '../templates/public'
import { usageRef } from '../usage/public'
import { versionsRef } from '../versions/public'
import { tenancyRef } from '../workspaces/public'
import { campaignKind } from './actor'
import { broadcastTarget } from './broadcast'
import { CampaignLines, callingTarget } from './calling'
import { CampaignOutcomes, callAnalysedData } from './outcomes'
import { Pacer } from './pacer'
import { campaignsRef } from './public'
import { campaignsSpec, openCampaigns, openRecipients, recipientsSpec } from './repository'
import { campaignsConsole, campaignsV1 } from './routes'
import { CampaignSender } from './sender'
import { broadcastSends } from './sends'
import { CampaignService } from './service'

/** WhatsApp's Cloud API takes 80 messages a second per business number by default (its standard throughput). */
const WHATSAPP_SENDS_PER_SECOND = 80

export const campaignsFeature = defineFeature(campaignsRef, {
  async build(kernel, use) {
    const { workspaceRepo } = use(tenancyRef)
    const { agents } = use(agentsRef)
    const { contacts } = use(contactsRef)
    const { numbers } = use(phoneNumbersRef)
    const { templates } = use(templatesRef)
    const { platform, inbound, totals } = use(messagingRef)
    const { calls } = use(callsRef)
    const { meter } = use(usageRef)
    const { notifications } = use(notificationsRef)
    const { serving } = use(versionsRef)
    const { store, clock, logger, bus, config } = kernel
    const [campaignRows, recipients] = [await openCampaigns(store), await openRecipients(store)]
    const lines = new CampaignLines()
    const outcomes = new CampaignOutcomes({ recipients })
    const pacer = new Pacer(config.campaignSendRate ?? (platform.name === 'whatsapp' ? WHATSAPP_SENDS_PER_SECOND : 0))
    const sender = new CampaignSender({
      // The campaign actor's sender knows only the campaign id.
      campaigns: campaignRows.acrossWorkspaces,
      recipients,
      contacts,
      outcomes,
      workspace: (id) => workspaceRepo.get(id),
      target: async (campaign, workspace) => {
        // Checked each time sending begins: a scheduled start or a restart has no request to refuse, so the campaign fails with it.
        const unpublished = await campaigns.unpublished(campaign)
        if (unpublished) return unpublished
        return campaign.kind === 'chatapp'
          ? broadcastTarget({ recipients, numbers, templates, platform, outcomes, meter, pacer, clock }, campaign, workspace)
          : callingTarget({ recipients, coordination: kernel.coordination, calls: () => calls, lines, outcomes, clock }, campaign, workspace)
      },
      logger,
    })
    // The service spawns the actors whose effects it implements: the kind's view first, registered after.
    const actors = campaignKind.actors(kernel.runtime)
    const campaigns = new CampaignService({ campaigns: campaignRows, recipients, agents, numbers, templates, serving, notifications, bus, clock, actors, sender })
    campaignKind.register(kernel.runtime, campaigns.effects())
    platform.onReceipt((r) => outcomes.receipt(r).catch((err) => logger.warn({ err, receipt: r.platformMessageId }, 'campaign receipt not recorded')))
    inbound.onCustomerMessage((workspaceId, phone) => outcomes.replied(workspaceId, phone))
    // GET /chatapp/summary counts broadcast messages too (they are not in conversations).
    totals.countSends((workspaceId, from, to) => broadcastSends(recipients, workspaceId, from, to))
    // The row once (local: the publishing instance); the line wake-up wherever the campaign runs (cluster).
    bus.subscribe(async (event) => {
      if (event.type === 'call.analysed') await outcomes.callAnalysed(callAnalysedData(event.data))
    })
    bus.subscribe((event) => {
      if (event.type === 'call.analysed' && String((event.data as { reference?: unknown }).reference).startsWith('cmp_')) lines.ended(String(event.data.id))
    }, 'cluster')
    agents.onDelete((agent) => campaigns.cancelAgent(agent.workspaceId, agent.id))
    contacts.onConsentWithdrawn(async (contact, reason) => sender.consentWithdrawn(contact.workspaceId, contact.phone, reason))
    // docs/spec.md Customer workspace: deleting a customer cancels its campaigns; restoring does not restart them (no hook).
    kernel.customerHooks.onDeleted((e) => campaigns.cancelWorkspace(e.customerId), 'campaigns cancelled')
    kernel.customerHooks.onErased(eraseCollections(store, [recipientsSpec, campaignsSpec]), 'campaigns erased')
    return {
      services: { campaigns },
      console: [campaignsConsole({ auth: kernel.http.console, campaigns })],
      v1: [campaignsV1({ context: kernel.http.v1, campaigns })],
      // 5 s: a platform send answers in well under a second; a shutdown should not wait on a slow one.
      stop: () => sender.stopAll(5_000),
      // Draining: sending stops before the next recipient and each campaign goes to another instance
      // now, which carries on from the recipients' rows (docs/production.md "Draining").
      async drain() {
        await sender.stopAll(5_000)
        await kernel.runtime.handOver(campaignKind.kind)
      },
    }
  },
})
