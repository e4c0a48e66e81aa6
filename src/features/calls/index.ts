/**
 * Calls: placing, scheduling, retrying and ending calls on the call actor, over the telephony
 * port (the sandbox network by default), with post-call analysis and the call events.
 */

import { randomBytes } from 'node:crypto'
import { defineFeature, eraseCollections } from '../../kernel/feature'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { mediaBridge } from '../../media/bridge'
import { PhraseCache } from '../../media/phrase-cache'
import { VOICE_LINES } from '../../media/phrases'
import { playoutLead } from '../../media/playout-lead'
import { MediaTokens } from '../../media/tokens'
import { loadSilero } from '../../media/vad'
import { SpeechProviders } from '../../providers/speech'
import { SandboxScripts } from '../../providers/stt/sandbox'
import type { TelephonyEvent } from '../../providers/telephony/port'
import { SandboxNetwork } from '../../providers/telephony/sandbox'
import { TwilioTelephony } from '../../providers/telephony/twilio'
import { SandboxTts } from '../../providers/tts/sandbox'
import { type AgentDoc, agentsRef } from '../agents/public'
import { byokRef } from '../byok/public'
import { contactsRef } from '../contacts/public'
import { conversationsRef } from '../conversations/public'
import { phoneNumbersRef } from '../phone-numbers/public'
import { usageRef } from '../usage/public'
import { versionsRef } from '../versions/public'
import { subscribes, webhooksRef } from '../webhooks/public'
import { tenancyRef } from '../workspaces/public'
import { callKind } from './actor'
import { Admission, DEFAULT_LIMITS, isRefusal, MEMORY_SHARE, memoryBudget } from './admission'
import { reportAnsweredBy } from './answered-by'
import { CallbackBooking } from './callbacks'
import { sandboxConsole } from './console'
import { CallReads } from './console-reads'
import { callEffects } from './effects'
import { CallFeed, watchedTries } from './live-feed'
import { LoopLag } from './loop-lag'
import { LostCalls } from './lost-calls'
import { LostRecordings } from './lost-recordings'
import { LostSwitches, switchOfInstance } from './lost-switches'
import { CallMedia, mediaChannel } from './media'
import { MediaEnds } from './media-ends'
import { callsRef } from './public'
import { eraseRecordings, RecordingSweeper, recordingsRoute } from './recordings'
import { callTriesSpec, openCallTries, tryId } from './repository'
import { hearRelayedScripts, RelayedScripts } from './sandbox-relay'
import { CallService } from './service'
import { announceChannel, CallTransfers } from './transfers'
import { twilioCallbacks } from './twilio-callbacks'
import { callsV1 } from './v1'

/** A network report as the chart's event. */
function chartEvent(e: Exclude<TelephonyEvent, { type: 'answeredBy' }>) {
  if (e.type === 'answered') return { type: 'call.answered' as const, at: e.at }
  if (e.type === 'unanswered') return { type: 'call.unanswered' as const, at: e.at, hangup: e.hangup }
  if (e.type === 'transfer_answered') return { type: 'transfer.answered' as const, at: e.at, ...(e.legRef ? { legRef: e.legRef } : {}) }
  if (e.type === 'transfer_accepted') return { type: 'transfer.accepted' as const, at: e.at, ...(e.legRef ? { legRef: e.legRef } : {}) }
  if (e.type === 'transfer_ended')
    return { type: 'transfer.ended' as const, at: e.at, outcome: e.outcome, ...(e.seconds !== undefined ? { seconds: e.seconds } : {}), ...(e.error ? { error: e.error } : {}) }
  return { type: 'call.ended' as const, at: e.at, hangup: e.hangup, ...(e.error ? { error: e.error } : {}) }
}

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
    const { store, clock, logger, bus, coordination, runtime } = kernel
    // Every row write tells the feed (live-feed.ts): the console app's live pages follow calls on it.
    const feed = new CallFeed(coordination, logger)
    const tries = watchedTries(await openCallTries(store), feed)
    const builtAt = clock.now()
    // The sandbox network always exists (its console routes and inbound simulation); calls go out on
    // Twilio when TELEPHONY_PROVIDER=twilio.
    // With several instances each runs a switch of it, named in its call references (lost-switches.ts).
    const several = coordination.kind === 'redis'
    const switchId = several ? switchOfInstance(runtime.instanceId) : null
    const sandbox = await SandboxNetwork.open(store, clock, switchId)
    const { config } = kernel
    // SECRET_KEY is always set by the server (persisted in DATA_DIR when not given); a bare
    // buildServices (some tests) gets a key for this process only.
    const tokens = new MediaTokens(config.secretKey ?? randomBytes(32).toString('hex'))
    const twilio =
      config.telephonyProvider === 'twilio'
        ? new TwilioTelephony({
            accountSid: config.providers.twilioAccountSid!,
            authToken: config.providers.twilioAuthToken!,
            apiBaseUrl: config.providers.twilioApiBaseUrl ?? 'https://api.twilio.com',
            publicBaseUrl: config.publicBaseUrl,
            mediaToken: (callId, attempt) => tokens.issue(callId, attempt),
            // The caller is still on the line and the transfer has not ended (the row is the chart's projection).
            transferOpen: async (callId, attempt) => {
              const row = await tries.get(tryId(callId, attempt)).catch(() => null)
              return row?.status === 'connected' && !!row.transfer && row.transfer.outcome === null
            },
          })
        : null
    const telephony = twilio ?? sandbox
    const workspace = (id: string) => workspaceRepo.get(id)
    // A v1 webhook of the agent subscribed to call.analysed and on: someone reads the fields (docs/spec.md rule 7).
    const readsAnalysis = async (workspaceId: string, agentId: string) => (await webhooks.list(workspaceId, agentId, 100, null)).some((hook) => subscribes(hook.events, 'call.analysed'))
    const scripts = new SandboxScripts()
    const speech = new SpeechProviders(config, scripts)
    // Listening from the build on: an analysis resumed at boot may wait for a stream's end.
    const mediaEnds = new MediaEnds({ tries, coordination, clock })
    await mediaEnds.start()
    kernel.clockHooks.on('calls: media ends', async (now) => mediaEnds.clockMoved(now))
    const mediaEnded = (tryId: string) => mediaEnds.ended(tryId)
    const effects = callEffects({
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
      admission: () => admission,
      announce: (callId, text) => coordination.publish(announceChannel(callId), text),
    })
    // Each stored move of a call's chart also goes to the feed (the console app highlights it).
    const charted: typeof effects = {
      ...effects,
      async project(id, snapshot) {
        await effects.project(id, snapshot)
        feed.publish({ kind: 'actor', callId: id, state: String(snapshot.value) })
      },
    }
    const actors = callKind.register(runtime, charted)
    const transfers = new CallTransfers({ tries, published, actors, clock })
    const media = new CallMedia({
      host: runtime.instanceId,
      files: kernel.files,
      feed,
      phrases: new PhraseCache(),
      meter,
      config,
      tries,
      agents,
      published,
      conversations,
      contacts,
      engine,
      telephony,
      speech,
      byok,
      tokens,
      coordination,
      clock,
      logger,
      actors,
      workspace,
      mediaEnded,
      inspect: kernel.inspection?.inspect,
      turnObserved: (stages) => kernel.metrics.voiceTurn(stages),
      transfers,
    })
    kernel.metrics.mediaSessions.from(() => media.live.size)
    const decoders = () => speech.decoders ?? { busy: 0, idle: 0, queued: 0, refused: 0 }
    kernel.metrics.sttDecoders.from(() => ['busy', 'idle', 'queued'].map((state) => ({ labels: { state }, value: decoders()[state as 'busy'] })))
    kernel.metrics.sttUtterancesRefused.from(() => decoders().refused)
    kernel.metrics.ttsSynthesizers.from(() => {
      const s = speech.synthesis ?? { started: 0, busy: 0, queued: 0 }
      return [
        { labels: { state: 'busy' }, value: s.busy },
        { labels: { state: 'idle' }, value: s.started - s.busy },
        { labels: { state: 'queued' }, value: s.queued },
      ]
    })
    const hasEspeak = !!Bun.which('espeak-ng')
    // The callee dials SANDBOX_MEDIA_URL (a load balancer, another instance) or this process; with
    // several instances what it says reaches the instance its stream lands on (sandbox-relay.ts).
    const calleeScripts = several ? new RelayedScripts(coordination) : scripts
    sandbox.attachMedia({
      baseUrl: () => config.sandboxMediaUrl ?? kernel.listening.url,
      token: (callId, attempt) => tokens.issue(callId, attempt),
      scripts: calleeScripts,
      pace: (callId) => media.live.get(callId)?.session.pace ?? null,
      tts: () => (hasEspeak ? speech.espeak() : new SandboxTts()),
    })
    const loopLag = new LoopLag()
    const admission = new Admission(
      {
        ...DEFAULT_LIMITS,
        maxCalls: config.admission.maxCalls,
        maxLoopLagMs: config.admission.maxLoopLagMs,
        minPlayoutLeadMs: config.admission.minPlayoutLeadMs,
        maxRssBytes: config.admission.maxRssMb ? config.admission.maxRssMb * 1_048_576 : MEMORY_SHARE * memoryBudget(),
      },
      {
        media: () => media.live,
        loopLagMs: () => loopLag.ms,
        playoutLeadMs: () => playoutLead.lowest(),
        decoderWaitMs: () => speech.decoders?.oldestWaitMs ?? 0,
        rssBytes: () => process.memoryUsage.rss(),
      },
    )
    kernel.metrics.callsAdmitted.from(() => Object.entries(admission.admitted).map(([direction, value]) => ({ labels: { direction }, value })))
    kernel.metrics.callsRefused.from(() =>
      [...admission.refused].map(([key, value]) => {
        const [direction, reason] = key.split(':') as [string, string]
        return { labels: { direction, reason }, value }
      }),
    )
    const calls = new CallService({
      admission,
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
    const lostRecordings = new LostRecordings({ files: kernel.files, tokens, clock, logger, publicBaseUrl: config.publicBaseUrl, dataDir: config.dataDir, workspace })
    const lost = new LostCalls({ tries, actors, mediaEnded, recordings: lostRecordings })
    // The agent's schedule_callback tool books a real scheduled call through the same rules.
    tools.provideCallbacks(new CallbackBooking({ calls, contacts, workspace, clock, logger }))
    const applyReport = async (e: TelephonyEvent) => {
      // A try that ended without media (unanswered, refused, hung up ringing) no longer takes room.
      if (e.type !== 'answered') admission.ended(e.callId)
      try {
        // Who answered goes to the call's voice session, not its chart: the call is connected either way.
        if (e.type === 'answeredBy') return await reportAnsweredBy({ tries, coordination }, e)
        await actors.send(e.callId, chartEvent(e))
        await actors.settle(e.callId)
      } catch (err) {
        logger.warn({ err, call: e.callId, report: e.type }, 'a phone network report could not be applied')
      }
    }
    sandbox.onEvent(applyReport)
    twilio?.onEvent(applyReport)
    kernel.clockHooks.on('calls: sandbox callees', (now) => sandbox.due(now))
    const answer = async (incoming: { from: string; to: string; callRef: string; at: number }) => {
      // No room here: the caller hears busy (Twilio's <Reject reason="busy"/>, the sandbox's unanswered ring).
      const ticket = admission.admit('inbound')
      if (isRefusal(ticket)) {
        logger.warn({ from: incoming.from, to: incoming.to, reason: ticket.reason }, `an inbound call was refused busy: ${ticket.message}`)
        return null
      }
      const answered = await calls.answerIncoming(incoming, workspace).catch((err: unknown) => {
        ticket.release()
        throw err
      })
      if (!answered) {
        ticket.release()
        return null
      }
      ticket.bind(answered.callId)
      await effects.openConversation({ id: answered.callId, attempt: 1 })
      return answered
    }
    sandbox.onIncoming(answer)
    kernel.customerHooks.onErased((e) => eraseRecordings(kernel.files, tries, e.customerId), 'call recordings erased')
    kernel.customerHooks.onErased(eraseCollections(store, [callTriesSpec]), 'calls erased')
    const lostSwitches = switchId ? await LostSwitches.open(store, { switchId, owner: runtime.instanceId, coordination, calls: lost, clock, logger }) : null
    let unhear: (() => Promise<void>) | null = null
    const sweeper = new RecordingSweeper({ files: kernel.files, tries, clock, logger })
    kernel.clockHooks.on('calls: lost streams', (now) => sweeper.clockMoved(now))
    contacts.onConsentWithdrawn((contact, reason) => calls.stopWaiting(contact.workspaceId, contact.phone, 'contact.optedOut', reason))
    // A deleted customer's waiting calls stop; a call in progress finishes (docs/spec.md Customer workspace).
    kernel.customerHooks.onDeleted((e) => calls.stopWaiting(e.customerId, null, 'call.delete'), 'scheduled calls stopped')
    /** The widget's call button: a web call answered by `agent`, and where its browser streams (the media bridge). */
    const webCalls = {
      async start(workspace: WorkspaceDoc, agent: AgentDoc) {
        const call = await calls.answerWeb(workspace, agent)
        await effects.openConversation({ id: call.callId, attempt: call.attempt })
        return { callId: call.callId, mediaPath: `/media/${call.callId}/${tokens.issue(call.callId, call.attempt)}` }
      },
    }
    return {
      services: { calls, sandbox, media, scripts, webCalls, feed, transfers, reads: new CallReads({ tries, clock, actors }) },
      ws: [mediaBridge(media, (message, err) => logger.warn({ err }, message))],
      legacy: [recordingsRoute({ files: kernel.files, tokens, tries, now: () => clock.now() })],
      async start() {
        // The sandbox network's calls live in this process: after a restart, a call that was ringing
        // (placed) or connected has no line any more, as a carrier drops a line. With one instance
        // (no REDIS_URL) every such call was ours; with several, another instance may still hold it.
        if (telephony === sandbox && coordination.kind === 'local') await lost.dropLost(clock.now())
        // A carrier's call outlives the process, but its media stream died with it (one instance:
        // every stream was ours): what it recorded is finished. The carrier reports the call's end.
        else if (coordination.kind === 'local') await lost.finishStreams()
        // One instance: every placement stored before this process was built died with the last one
        // (a resumed campaign may be placing calls already).
        if (!several) await lost.failUnplaced(builtAt)
        if (several) unhear = await hearRelayedScripts(coordination, scripts, (callId) => media.live.has(callId))
        await lostSwitches?.start()
        // Silero's model loads at boot, not on the first call's media: loading onnxruntime's native
        // addon and the session blocks the event loop ~170 ms once, which stalled every request in
        // flight at that moment (bench:calls' p99 at 100 calls/s: 146–199 ms with it, 20 ms without).
        if (config.speech.vad === 'silero') await loadSilero()
        // Retention is counted in days (30 / 75): swept now, then daily on the service clock.
        await sweeper.start()
        loopLag.start()
      },
      async stop() {
        sweeper.stop()
        loopLag.stop()
        await lostSwitches?.stop()
        await unhear?.()
        await mediaEnds.stop()
        // After the calls' media closed: their decoders' memory is returned.
        await speech.close()
      },
      // Live calls here finish until the deadline, then hear a goodbye (docs/production.md "Draining").
      drain: (draining) => media.drain(draining, VOICE_LINES.closing),
      v1: [callsV1({ context: kernel.http.v1, calls, transfers })],
      console: [sandboxConsole({ auth: kernel.http.console, sandbox })],
      callbacks: twilio ? [twilioCallbacks({ twilio, clock, publicBaseUrl: config.publicBaseUrl, answer })] : [],
    }
  },
})
