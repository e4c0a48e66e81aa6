/**
 * Calls: placing, scheduling, retrying and ending calls on the call actor, over the telephony
 * port (the sandbox network by default), with post-call analysis and the call events.
 *
 * The build reads as its parts, in the order they need each other (assembly/): the lines calls
 * run on, the speech engines, the instance's headroom, the call chart and its effects, the calls'
 * media, the service, what the network reports, and what a boot recovers.
 */

import { hostPaced } from '../../clock'
import { defineFeature, eraseCollections } from '../../kernel/feature'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { AccountRefused } from '../../providers/telephony/port'
import { loadSilero, mediaBridge, PhraseCache, serializerFor, VOICE_LINES } from '../../voice/public'
import { type AgentDoc, agentsRef } from '../agents/public'
import { byokRef } from '../byok/public'
import { contactsRef } from '../contacts/public'
import { conversationsRef } from '../conversations/public'
import { phoneNumbersRef } from '../phone-numbers/public'
import { usageRef } from '../usage/public'
import { versionsRef } from '../versions/public'
import { subscribes, webhooksRef } from '../webhooks/public'
import { tenancyRef } from '../workspaces/public'
import { buildCallChart } from './assembly/chart'
import { buildHeadroom } from './assembly/headroom'
import { buildLines } from './assembly/lines'
import { hearNetwork } from './assembly/network'
import { buildRecovery } from './assembly/recovery'
import { buildSpeech } from './assembly/speech'
import { sandboxConsole } from './control/console'
import { telnyxCallbacks } from './control/telnyx-callbacks'
import { announceChannel } from './control/transfers'
import { twilioCallbacks } from './control/twilio-callbacks'
import { CallFeed, watchedTries } from './live/live-feed'
import { CallMedia, type LiveStreams, mediaChannel } from './live/media'
import { MediaEnds } from './live/media-ends'
import { voicePipeline } from './live/voice-pipeline'
import { CallbackBooking } from './placing/callbacks'
import { type CallRefusalDoc, callRefusalsSpec, RefusalCounts } from './placing/refusal-counts'
import { callsRef } from './public'
import { CallerRecordings } from './records/caller-recording'
import { CallReads } from './records/console-reads'
import { eraseRecordings, recordingsRoute } from './records/recordings'
import { callTriesSpec, openCallTries } from './records/repository'
import { CallService } from './service'
import { callsV1 } from './v1'

export const callsFeature = defineFeature(callsRef, {
  async build(kernel, use) {
    const { workspaceRepo } = use(tenancyRef)
    const { agents } = use(agentsRef)
    const { contacts } = use(contactsRef)
    const { numbers } = use(phoneNumbersRef)
    const { conversations, models, engine, tools } = use(conversationsRef)
    const { meter, ledger } = use(usageRef)
    const { runtime: byok } = use(byokRef)
    const { webhooks } = use(webhooksRef)
    // Every call talks as the agent's published version (docs/spec.md Agent publication).
    const { serving: published } = use(versionsRef)
    const { store, clock, logger, bus, coordination, runtime, config } = kernel
    const builtAt = clock.now()
    // Every row write tells the feed (live/live-feed.ts): the console app's live pages follow calls on it.
    const feed = new CallFeed(coordination, logger)
    const tries = watchedTries(await openCallTries(store), feed)
    const workspace = (id: string) => workspaceRepo.get(id)

    const lines = await buildLines(kernel, tries, (number) => numbers.carrierAccountOf(number))
    // A number's own carrier account is checked with the line's network before it is kept.
    numbers.checkAccountsWith(async (account) => {
      try {
        await lines.telephony.verifyAccount(account)
        return null
      } catch (err) {
        if (err instanceof AccountRefused) return { refused: err.message }
        throw err
      }
    })
    const { sandbox, twilio, telnyx, telephony, tokens } = lines
    const live: LiveStreams = new Map()
    const { speech, scripts } = buildSpeech(kernel, { ...lines, coordination, live })
    const { admission, loopLag } = buildHeadroom(kernel, live, speech)
    // Calls refused for want of room, per workspace and hour (placing/refusal-counts.ts): the Quality page's.
    const refusals = new RefusalCounts({
      refusals: await store.collection<CallRefusalDoc>(callRefusalsSpec),
      clock,
      instance: runtime.instanceId,
      workspaceOfNumber: async (number) => {
        const held = await numbers.byNumber(number)
        return held?.channel === 'voice' ? held.workspaceId : null
      },
      logger,
    })

    // Listening from the build on: an analysis resumed at boot may wait for a stream's end.
    const mediaEnds = new MediaEnds({ tries, coordination, clock })
    await mediaEnds.start()
    kernel.clockHooks.on('calls: media ends', async (now) => mediaEnds.clockMoved(now))
    const mediaEnded = (tryId: string) => mediaEnds.ended(tryId)

    // The call chart and its effects. A v1 webhook of the agent subscribed to call.analysed and on:
    // someone reads the fields (docs/spec.md rule 7).
    const readsAnalysis = async (workspaceId: string, agentId: string) => (await webhooks.list(workspaceId, agentId, 100, null)).some((hook) => subscribes(hook.events, 'call.analysed'))
    const { effects, actors, transfers } = buildCallChart(runtime, feed, {
      tries,
      telephony,
      media: (callId) => coordination.publish(mediaChannel(callId), 'hangup'),
      agents,
      published,
      numbers,
      contacts,
      conversations,
      models,
      meter,
      bus,
      coordination,
      clock,
      logger,
      workspace,
      readsAnalysis,
      mediaSettled: (tryId) => mediaEnds.settled(tryId),
      admission,
      refusals,
      announce: (callId, text) => coordination.publish(announceChannel(callId), text),
    })

    const media = new CallMedia({
      pipeline: voicePipeline({
        config,
        agents,
        published,
        conversations,
        engine,
        tools,
        telephony,
        speech,
        byok,
        phrases: new PhraseCache(),
        clock,
        contacts,
        meter,
        logger,
        transfers,
        turnObserved: (stages) => kernel.metrics.voiceTurn(stages),
      }),
      record: { tries, actors, telephony, tokens, clock, logger, publicBaseUrl: config.publicBaseUrl },
      live,
      host: runtime.instanceId,
      files: kernel.files,
      config,
      coordination,
      workspace,
      mediaEnded,
      feed,
      inspect: kernel.inspection?.inspect,
    })
    kernel.metrics.mediaSessions.from(() => media.live.size)

    const calls = new CallService({
      admission,
      refusals,
      tries,
      agents,
      published,
      contacts,
      numbers,
      coordination,
      clock,
      meter,
      ledger,
      actors,
      // Simulated callers ring on the sandbox network only (no carrier plays a script).
      simulatedCallers: telephony === sandbox ? (callId, caller) => sandbox.expectCaller(callId, caller) : undefined,
      byokOffersVoice: byok ? (ws, voice) => byok.offersVoice(ws, voice) : undefined,
    })
    // The agent's schedule_callback tool books a real scheduled call through the same rules.
    tools.provideCallbacks(new CallbackBooking({ calls, contacts, workspace, clock, logger }))
    contacts.onConsentWithdrawn((contact, reason) => calls.stopWaiting(contact.workspaceId, contact.phone, 'contact.optedOut', reason))
    // A deleted customer's waiting calls stop; a call in progress finishes (docs/spec.md Customer workspace).
    kernel.customerHooks.onDeleted((e) => calls.stopWaiting(e.customerId, null, 'call.delete'), 'scheduled calls stopped')
    kernel.customerHooks.onErased((e) => eraseRecordings(kernel.files, tries, e.customerId), 'call recordings erased')
    kernel.customerHooks.onErased(eraseCollections(store, [callTriesSpec, callRefusalsSpec]), 'calls erased')

    const answer = hearNetwork({ lines, admission, refusals, actors, tries, coordination, calls, effects, workspace, logger })
    kernel.clockHooks.on('calls: sandbox callees', (now) => sandbox.due(now))
    const recovery = await buildRecovery(kernel, { lines, tries, actors, mediaEnded, workspace, streaming: (callId) => media.live.has(callId), scripts, builtAt })

    /** The widget's call button: a web call answered by `agent`, and where its browser streams (the media bridge). */
    const webCalls = {
      async start(workspace: WorkspaceDoc, agent: AgentDoc) {
        const call = await calls.answerWeb(workspace, agent)
        await effects.openConversation({ id: call.callId, attempt: call.attempt })
        return { callId: call.callId, mediaPath: `/media/${call.callId}/${tokens.issue(call.callId, call.attempt)}` }
      },
    }
    return {
      services: {
        calls,
        sandbox,
        media,
        scripts,
        webCalls,
        feed,
        transfers,
        refusals,
        reads: new CallReads({ tries, clock, actors, refusals }),
        callerRecordings: new CallerRecordings({ files: kernel.files, tries, clock }),
      },
      ws: [mediaBridge(media, (message, err) => logger.warn({ err }, message), serializerFor(telephony.name), hostPaced(clock))],
      legacy: [recordingsRoute({ files: kernel.files, tokens, tries, now: () => clock.now() })],
      async start() {
        await recovery.start()
        // Silero's model loads at boot, not on the first call's media: loading onnxruntime's native
        // addon and the session blocks the event loop ~170 ms once, which stalled every request in
        // flight at that moment (bench:calls' p99 at 100 calls/s: 146–199 ms with it, 20 ms without).
        if (config.speech.vad === 'silero') await loadSilero(hostPaced(clock))
        await recovery.sweep()
        loopLag.start()
        refusals.start()
      },
      async stop() {
        loopLag.stop()
        // The last counts go to the store: a clean stop loses none.
        await refusals.stop()
        await recovery.stop()
        await mediaEnds.stop()
        // After the calls' media closed: their decoders' memory is returned.
        await speech.close()
      },
      // Live calls here finish until the deadline, then hear a goodbye (docs/production.md "Draining").
      drain: (draining) => media.drain(draining, VOICE_LINES.closing),
      v1: [callsV1({ context: kernel.http.v1, calls, transfers })],
      console: [sandboxConsole({ auth: kernel.http.console, sandbox })],
      callbacks: [...(twilio ? [twilioCallbacks({ twilio, clock, publicBaseUrl: config.publicBaseUrl, answer })] : []), ...(telnyx ? [telnyxCallbacks({ telnyx, clock, answer })] : [])],
    }
  },
})
