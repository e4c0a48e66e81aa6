/**
 * Calls: placing, scheduling, retrying and ending calls on the call actor, over the telephony
 * port (the sandbox network by default), with post-call analysis and the call events.
 */
import { registerCall, type CallActors } from '../../../actors/call'
import type { TelephonyEvent } from '../../providers/telephony/port'
import { SandboxNetwork } from '../../providers/telephony/sandbox'
import { TwilioTelephony } from '../../providers/telephony/twilio'
import { twilioCallbacks } from './twilio-callbacks'
import { agentsFeature } from '../agents'
import { contactsFeature } from '../contacts'
import { conversationsFeature } from '../conversations'
import { defineFeature } from '../feature'
import { phoneNumbersFeature } from '../phone-numbers'
import { usageFeature } from '../usage'
import { tenancyFeature } from '../workspaces'
import { subscribes, webhooksFeature } from '../webhooks'
import { sandboxConsole } from './console'
import { callEffects } from './effects'
import { callTriesSpec, openCallTries } from './repository'
import { CallService } from './service'
import { callsV1 } from './v1'
import { eraseCollections } from '../feature'

/** A network report as the chart's event. */
function chartEvent(e: TelephonyEvent) {
  if (e.type === 'answered') return { type: 'call.answered' as const, at: e.at }
  if (e.type === 'unanswered') return { type: 'call.unanswered' as const, at: e.at, hangup: e.hangup }
  return { type: 'call.ended' as const, at: e.at, hangup: e.hangup }
}

export const callsFeature = defineFeature({
  name: 'calls',
  async build(kernel, use) {
    const { workspaceRepo } = use(tenancyFeature)
    const { agents } = use(agentsFeature)
    const { contacts } = use(contactsFeature)
    const { numbers } = use(phoneNumbersFeature)
    const { conversations, models } = use(conversationsFeature)
    const { ledger } = use(usageFeature)
    const { webhooks } = use(webhooksFeature)
    const { store, clock, logger, bus, coordination, runtime } = kernel
    const tries = await openCallTries(store)
    // The sandbox network always exists (its console routes and inbound simulation); calls go out on
    // Twilio when TELEPHONY_PROVIDER=twilio.
    const sandbox = await SandboxNetwork.open(store, clock)
    const { config } = kernel
    const twilio =
      config.telephonyProvider === 'twilio'
        ? new TwilioTelephony({
            accountSid: config.providers.twilioAccountSid!,
            authToken: config.providers.twilioAuthToken!,
            apiBaseUrl: config.providers.twilioApiBaseUrl ?? 'https://api.twilio.com',
            publicBaseUrl: config.publicBaseUrl,
          })
        : null
    const telephony = twilio ?? sandbox
    const workspace = (id: string) => workspaceRepo.get(id)
    // A v1 webhook of the agent subscribed to call.analysed and on: someone reads the fields (SPEC.md rule 7).
    const readsAnalysis = async (workspaceId: string, agentId: string) =>
      (await webhooks.list(workspaceId, agentId, 100, null)).some((hook) => subscribes(hook.events, 'call.analysed'))
    const effects = callEffects({ tries, telephony, agents, numbers, contacts, conversations, models, ledger, bus, coordination, clock, logger, workspace, readsAnalysis })
    const actors: CallActors = registerCall(runtime, { effects, clock, logger })
    const calls = new CallService({ tries, agents, contacts, numbers, coordination, clock, actors: () => actors })
    const applyReport = async (e: TelephonyEvent) => {
      try {
        await actors.send(e.callId, chartEvent(e))
        await actors.settle(e.callId)
      } catch (err) {
        logger.warn({ err, call: e.callId, report: e.type }, 'a phone network report could not be applied')
      }
    }
    sandbox.onEvent(applyReport)
    twilio?.onEvent(applyReport)
    kernel.onClockAdvance.push((now) => sandbox.due(now))
    const answer = async (incoming: { from: string; to: string; callRef: string; at: number }) => {
      const answered = await calls.answerIncoming(incoming, workspace)
      if (answered) await effects.openConversation({ id: answered.callId, attempt: 1 })
      return answered
    }
    sandbox.onIncoming(answer)
    kernel.customerHooks.onErased(eraseCollections(store, [callTriesSpec]), 'calls erased')
    contacts.onConsentWithdrawn((contact, reason) => calls.stopWaiting(contact.workspaceId, contact.phone, 'contact.optedOut', reason))
    // A deleted customer's waiting calls stop; a call in progress finishes (SPEC.md Customer workspace).
    kernel.customerHooks.onDeleted((e) => calls.stopWaiting(e.customerId, null, 'call.delete'), 'scheduled calls stopped')
    return {
      services: { calls, sandbox },
      v1: [callsV1({ context: kernel.http.v1, calls })],
      console: [sandboxConsole({ auth: kernel.http.console, sandbox })],
      callbacks: twilio ? [twilioCallbacks({ twilio, clock, publicBaseUrl: config.publicBaseUrl, answer })] : [],
    }
  },
})
