/**
 * Campaign status (docs/spec.md "Campaign status").
 *
 *   sending --pause--> paused --resume--> sending
 *   draft | sending | paused --cancel--> cancelled (permanent)
 *
 * Not shown in docs/spec.md, chosen here:
 * - draft --campaign.start (console "start")--> sending.
 * - draft --timer.due at or after scheduledAt--> sending: a campaign created with `scheduledAt`
 *   starts itself then. The instant lives in context and is the durable deadline `start`
 *   (campaignDeadlines) while the campaign is a draft; a manual start or a cancel leaves draft, so
 *   the deadline goes with it and the campaign never starts twice. An early or stale wake-up
 *   changes nothing.
 * - sending --every recipient handled--> sent. "Handled" = sent, failed or skipped; the runtime
 *   reports the absolute number handled so far (`campaign.progress`), so a repeated report is
 *   harmless. A campaign with no recipients is sent as soon as it starts.
 * - sending | paused --campaign.failed (a failure that stops the whole campaign: template
 *   rejected or paused, number disconnected, balance exhausted)--> failed, with `lastError`.
 * - A paused campaign whose in-flight messages/calls finish stays paused; resuming it finds
 *   nobody left and moves straight to sent.
 * - `campaign.finished` is emitted on every end: sent, failed and cancelled (a cancel may not be
 *   the developer's own: deleting a customer cancels its campaigns).
 * - Progress is still counted after a pause or cancel: work already handed over completes.
 * - Every refused move (pause/resume/cancel/start where it does not apply, including pausing a
 *   paused campaign) is recorded so the API answers 409 naming the state.
 */
import { assign, type EventObject, emit, fromCallback, fromPromise, type SnapshotFrom, setup } from 'xstate'
import { type CanApply, canApplyOn, type Refusal, type RefusalParams, refusalOf } from './refusal'

/** Bump when the chart changes shape: persisted snapshots carry it. */
/** 2: effects became invoked actors (sending runs sendRecipients), campaign.finished is emitted. 3: also on cancel. 4: scheduledAt. */
export const MACHINE_VERSION = 4

export type CampaignState = 'draft' | 'sending' | 'paused' | 'sent' | 'failed' | 'cancelled'

export interface CampaignContext {
  id: string
  recipients: number
  /** When a draft starts itself (service-clock ms), or null: started by hand only. */
  scheduledAt: number | null
  /** How many recipients have been handled (sent, failed or skipped). Only grows. */
  handled: number
  startedAt: number | null
  pausedAt: number | null
  finishedAt: number | null
  lastError: string | null
  lastRefusal: Refusal | null
}

export interface CampaignInput {
  id: string
  recipients: number
  scheduledAt?: number | null
}

export type CampaignEvent =
  | { type: 'campaign.start'; at: number }
  | { type: 'campaign.pause'; at: number }
  | { type: 'campaign.resume'; at: number }
  | { type: 'campaign.cancel'; at: number }
  | { type: 'campaign.progress'; at: number; handled: number }
  | { type: 'campaign.failed'; at: number; error: string }
  /** A durable timer woke the campaign (its scheduled start); `at` is the delivery instant. */
  | { type: 'timer.due'; at: number; name?: string }

/**
 * Effects: invoked actors the binding provides with `machine.provide({ actors })`.
 * - `sendRecipients` hands messages or calls to every recipient not yet reached; it runs while the
 *   campaign is `sending` and is stopped by leaving that state (pause, cancel, failure), so
 *   "stop sending" is the chart's own exit, not a separate effect. Resuming invokes it again.
 * - `notifyFailure` tells the developer the campaign failed (docs/spec.md Events rule 8).
 * `campaign.finished` leaves through `emit()` on every end (sent, failed, cancelled); the binding publishes it.
 */
export const CAMPAIGN_EFFECTS = ['sendRecipients', 'notifyFailure'] as const
export type CampaignEffect = (typeof CAMPAIGN_EFFECTS)[number]

export interface CampaignEffectInput {
  id: string
}

/** What `notifyFailure` tells: the reason travels with it, as the campaign's row is projected only after the effect starts. */
export interface CampaignFailureInput extends CampaignEffectInput {
  lastError: string | null
}

export type CampaignEmitted = { type: 'campaign.finished'; id: string }

const refuse = (state: CampaignState, message: string) => ({
  actions: { type: 'recordRefusal' as const, params: { state, message } },
})
const onlyFrom = (state: CampaignState, move: string, applies: string) => refuse(state, `campaign is ${state}; ${move} applies only to a ${applies} campaign`)

export const campaignMachine = setup({
  types: {
    context: {} as CampaignContext,
    events: {} as CampaignEvent,
    input: {} as CampaignInput,
    emitted: {} as CampaignEmitted,
  },
  actors: {
    sendRecipients: fromCallback<EventObject, CampaignEffectInput>(() => {
      throw new Error('provided by the campaigns binding')
    }),
    notifyFailure: fromPromise<void, CampaignFailureInput>(async () => {
      throw new Error('provided by the campaigns binding')
    }),
  },
  actions: {
    emitCampaignFinished: emit(({ context }) => ({ type: 'campaign.finished' as const, id: context.id })),
    markStarted: assign({ startedAt: ({ event }) => event.at }),
    markPaused: assign({ pausedAt: ({ event }) => event.at }),
    markResumed: assign({ pausedAt: () => null }),
    markFinished: assign({ finishedAt: ({ event }) => event.at }),
    recordProgress: assign({
      // Absolute count, never decreasing: a duplicate or out-of-order report changes nothing.
      handled: ({ context, event }) =>
        event.type === 'campaign.progress' && Number.isFinite(event.handled) ? Math.min(context.recipients, Math.max(context.handled, event.handled)) : context.handled,
    }),
    recordFailure: assign({
      lastError: ({ event }) => (event.type === 'campaign.failed' ? event.error : null),
    }),
    recordRefusal: assign((args, params: RefusalParams) => ({
      lastRefusal: refusalOf(args.event, params),
    })),
  },
  guards: {
    allHandled: ({ context }) => context.handled >= context.recipients,
    isDue: ({ context, event }) => event.type === 'timer.due' && context.scheduledAt !== null && event.at >= context.scheduledAt,
  },
}).createMachine({
  id: 'campaign',
  description: 'A broadcast or calling campaign, from its draft to its end.',
  context: ({ input }) => ({
    id: input.id,
    recipients: Math.max(0, input.recipients),
    scheduledAt: input.scheduledAt ?? null,
    handled: 0,
    startedAt: null,
    pausedAt: null,
    finishedAt: null,
    lastError: null,
    lastRefusal: null,
  }),
  initial: 'draft',
  // Counting applies in every state: work already handed over completes after pause or cancel.
  on: { 'campaign.progress': { actions: 'recordProgress' } },
  states: {
    draft: {
      description: 'Created in the console; nothing sent yet. With scheduledAt, its durable deadline starts it (campaignDeadlines).',
      on: {
        'campaign.start': { target: 'sending', actions: ['markStarted'] },
        // A stale, early or duplicate wake-up fails the guard and changes nothing.
        'timer.due': { guard: 'isDue', target: 'sending', actions: ['markStarted'] },
        'campaign.cancel': { target: 'cancelled', actions: ['markFinished', 'emitCampaignFinished'] },
        'campaign.pause': onlyFrom('draft', 'pause', 'sending'),
        'campaign.resume': onlyFrom('draft', 'resume', 'paused'),
      },
    },
    sending: {
      description: 'Handing messages or calls to recipients not yet reached (sendRecipients runs while here).',
      always: { guard: 'allHandled', target: 'sent' },
      invoke: { id: 'sendRecipients', src: 'sendRecipients', input: ({ context }) => ({ id: context.id }) },
      on: {
        'campaign.pause': { target: 'paused', actions: ['markPaused'] },
        'campaign.cancel': { target: 'cancelled', actions: ['markFinished', 'emitCampaignFinished'] },
        'campaign.failed': { target: 'failed', actions: ['recordFailure', 'markFinished', 'emitCampaignFinished'] },
        'campaign.start': onlyFrom('sending', 'start', 'draft'),
        'campaign.resume': onlyFrom('sending', 'resume', 'paused'),
      },
    },
    paused: {
      description: 'Sending stopped by request; in-flight messages and calls still complete.',
      on: {
        'campaign.resume': { target: 'sending', actions: ['markResumed'] },
        'campaign.cancel': { target: 'cancelled', actions: ['markFinished', 'emitCampaignFinished'] },
        'campaign.failed': { target: 'failed', actions: ['recordFailure', 'markFinished', 'emitCampaignFinished'] },
        'campaign.start': onlyFrom('paused', 'start', 'draft'),
        'campaign.pause': refuse('paused', 'campaign is paused already; pause applies only to a sending campaign'),
      },
    },
    sent: {
      description: 'Every recipient was handled.',
      entry: ['markFinished', 'emitCampaignFinished'],
      on: {
        'campaign.start': onlyFrom('sent', 'start', 'draft'),
        'campaign.pause': onlyFrom('sent', 'pause', 'sending'),
        'campaign.resume': onlyFrom('sent', 'resume', 'paused'),
        'campaign.cancel': refuse('sent', 'campaign is sent; only a draft, sending or paused campaign can be cancelled'),
      },
    },
    failed: {
      description: 'Stopped by a failure that affects the whole campaign; see lastError. The developer is told (notifyFailure).',
      invoke: { id: 'notifyFailure', src: 'notifyFailure', input: ({ context }) => ({ id: context.id, lastError: context.lastError }) },
      on: {
        'campaign.start': onlyFrom('failed', 'start', 'draft'),
        'campaign.pause': onlyFrom('failed', 'pause', 'sending'),
        'campaign.resume': onlyFrom('failed', 'resume', 'paused'),
        'campaign.cancel': refuse('failed', 'campaign is failed; only a draft, sending or paused campaign can be cancelled'),
      },
    },
    cancelled: {
      description: 'Cancelled by request; permanent.',
      on: {
        'campaign.start': refuse('cancelled', 'campaign is cancelled; cancelling is permanent'),
        'campaign.pause': refuse('cancelled', 'campaign is cancelled; cancelling is permanent'),
        'campaign.resume': refuse('cancelled', 'campaign is cancelled; cancelling is permanent'),
        'campaign.cancel': refuse('cancelled', 'campaign is cancelled already'),
      },
    },
  },
})

export type CampaignSnapshot = SnapshotFrom<typeof campaignMachine>

/** The durable deadline of a scheduled draft (the runtime turns it into a timer that sends `timer.due`). */
export function campaignDeadlines(s: { value: unknown; context: CampaignContext }): { name: string; at: number }[] {
  return s.value === 'draft' && s.context.scheduledAt !== null ? [{ name: 'start', at: s.context.scheduledAt }] : []
}

/** Would this move apply? `{ ok: false }` carries the state a 409 must name. */
export function canApply(target: CampaignSnapshot | CampaignState, event: CampaignEvent | CampaignEvent['type']): CanApply {
  return canApplyOn(campaignMachine, target, event)
}
