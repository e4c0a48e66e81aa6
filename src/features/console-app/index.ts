/**
 * The console web app at /console/app (docs/console-app.md): sign in with the console token, pick a
 * workspace, and watch it live — calls in progress with their pipeline state and transcript,
 * calls with recordings and latency, the state charts with a live actor's state, the inbox and
 * campaigns. Plain pages and small modules served from web/, libraries from node_modules.
 */
import { randomBytes } from 'node:crypto'
import { defineFeature } from '../../kernel/feature'
import { WorkspaceCollection } from '../../store/workspace-scoped'
import { agentsRef } from '../agents/public'
import { callsRef } from '../calls/public'
import { campaignsRef } from '../campaigns/public'
import { contactsRef } from '../contacts/public'
import { conversationsRef } from '../conversations/public'
import { knowledgeRef } from '../knowledge/public'
import { phoneNumbersRef } from '../phone-numbers/public'
import { simulationsRef } from '../simulations/public'
import { versionsRef } from '../versions/public'
import { webhooksRef } from '../webhooks/public'
import { tenancyRef } from '../workspaces/public'
import { consoleAgentRoutes } from './agent-routes'
import { consoleAgentVersionRoutes } from './agent-version-routes'
import { AppAssets } from './assets'
import { consoleCampaignReads } from './campaign-reads'
import { InboxRows } from './inbox-rows'
import { LiveHub } from './live'
import { consoleAppRef } from './public'
import { consoleQualityReads } from './quality-reads'
import { consoleReads } from './reads'
import { appApi, appPages, appStream } from './routes'
import { consoleSimulationReads } from './simulation-reads'
import { StreamTickets } from './tickets'

export const consoleAppFeature = defineFeature(consoleAppRef, {
  build(kernel, use) {
    const { workspaceRepo } = use(tenancyRef)
    const { feed, reads: calls, transfers } = use(callsRef)
    const { conversations, testChat } = use(conversationsRef)
    const { versions } = use(versionsRef)
    const { numbers } = use(phoneNumbersRef)
    const { knowledge } = use(knowledgeRef)
    const { campaigns } = use(campaignsRef)
    const { legacyWebhooks } = use(webhooksRef)
    const { contacts } = use(contactsRef)
    const { agents } = use(agentsRef)
    const { simulations } = use(simulationsRef)
    const { config, coordination, logger, bus, clock } = kernel
    const inbox = new InboxRows({ contacts, conversations, clock })
    const assets = new AppAssets()
    // SECRET_KEY is always set by the server; a bare buildServices (some tests) signs for this process only.
    const tickets = new StreamTickets(config.secretKey ?? randomBytes(32).toString('hex'), coordination)
    const hub = new LiveHub({ feed, reads: calls, logger, clock })
    return {
      services: { hub },
      console: [
        appPages(assets),
        appStream({ tickets, hub, server: () => kernel.listening.server }),
        appApi({ auth: kernel.http.console, tickets, exists: async (id) => (await workspaceRepo.get(id)) !== null }),
        consoleReads({ auth: kernel.http.console, workspaceRepo, calls, transfers, conversations, legacyWebhooks, events: new WorkspaceCollection(bus.events), inbox }),
        consoleCampaignReads({ auth: kernel.http.console, campaigns, calls }),
        consoleQualityReads({ auth: kernel.http.console, calls }),
        consoleAgentRoutes({ auth: kernel.http.console, agents, versions, calls, numbers, clock, knowledge }),
        consoleAgentVersionRoutes({ auth: kernel.http.console, versions, testChat }),
        consoleSimulationReads({ auth: kernel.http.console, simulations, agents }),
      ],
      stop: () => hub.close(),
    }
  },
})
