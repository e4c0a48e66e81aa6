/**
 * Website chat: the visitor API behind the widget (`/api/v1/web/{webKey}/…`), the
 * widget itself (`/widget.js`, `/w/{webKey}` and its static files), and the console's `web`
 * inbound. The published agent answers through the conversation engine with every action live.
 */
import { randomBytes } from 'node:crypto'
import { defineFeature } from '../../kernel/feature'
import { agentsRef } from '../agents/public'
import { callsRef } from '../calls/public'
import { conversationsRef } from '../conversations/public'
import { messagingRef } from '../messaging/public'
import { versionsRef } from '../versions/public'
import { tenancyRef } from '../workspaces/public'
import { webRef } from './public'
import { WebChat } from './service'
import { VisitorSessions } from './sessions'
import { TeammateMessages } from './teammates'
import { webV1 } from './v1'
import { widgetRoutes } from './widget-routes'

export const webFeature = defineFeature(webRef, {
  async build(kernel, use) {
    const { workspaceRepo } = use(tenancyRef)
    const { agents } = use(agentsRef)
    const { conversations, engine, models, tools } = use(conversationsRef)
    const { serving } = use(versionsRef)
    const { web: slot } = use(messagingRef)
    const { webCalls } = use(callsRef)
    const { config, coordination, clock, logger } = kernel
    // SECRET_KEY is always set by the server; a bare buildServices (some tests) signs for this process only.
    const sessions = new VisitorSessions(config.secretKey ?? randomBytes(32).toString('hex'))
    const web = new WebChat({
      agents,
      served: (ws, id) => serving.servingAgent(ws, id),
      workspace: (id) => workspaceRepo.get(id),
      conversations,
      engine,
      models,
      tools,
      coordination,
      clock,
      sessions,
      logger,
      sessionsPerAddress: config.visitorSessionsPerMinute,
      startCall: (workspace, agent) => webCalls.start(workspace, agent),
    })
    slot.receive = (workspace, input) => web.consoleInbound(workspace, input)
    const teammates = new TeammateMessages({ coordination })
    slot.show = (conversation, message) => teammates.show(conversation, message)
    return {
      services: { web, sessions, teammates },
      v1: [webV1({ web, teammates, logger, server: () => kernel.listening.server })],
      legacy: [widgetRoutes({ exists: (webKey) => web.exists(webKey) })],
      stop: () => web.settled(),
    }
  },
})
