/**
 * The person's leg of a warm transfer on Telnyx's Call Control v2, after the leg was dialed
 * (`POST /v2/calls`, its `client_state` a `warm` LegState carrying the brief): what each of its
 * webhooks asks for. The answer (`call.answered`) is the person picking up: the brief is said and
 * one key gathered (`actions/gather_using_speak`); `call.gather.ended` with 1 is the call taken
 * (the chart then joins the caller with `actions/bridge`), anything else declined, said goodbye to
 * (`actions/speak`, then `actions/hangup` on its `call.speak.ended`); `call.hangup` is the leg's end.
 * https://developers.telnyx.com/api-reference/call-commands/gather-using-speak and the
 * call.gather.ended, call.speak.ended and call.hangup callbacks.
 */
import type { TelephonyEvent } from './port'
import { encodeLegState, hangupSeconds, type LegState, type TelnyxWebhook, transferOutcome } from './telnyx-events'

/**
 * How long the person has to press 1 once the brief has been said: the 10 s Twilio's warm
 * `<Gather>` gives (twilio.ts WARM_KEY_SECONDS), a person deciding whether to take a call.
 */
export const TELNYX_WARM_KEY_MS = 10_000
/** The key that takes a warm transfer, as on Twilio. */
export const TELNYX_WARM_TAKE_KEY = '1'

/** Telnyx's basic text-to-speech voice and language (gather_using_speak's and speak's `voice`, `language`). */
const SPOKEN = { payload_type: 'text', voice: 'female', language: 'en-US' } as const

export const WARM_DECLINED_WORDS = 'Thank you. Goodbye.'
export const WARM_GONE_WORDS = 'Sorry, the caller has already left. Goodbye.'

export interface WarmLegDeps {
  /** A call command on the leg (`actions/{action}`), on the account it was placed with. */
  command(action: string, body: Record<string, unknown>): Promise<Response>
  emit(event: TelephonyEvent): Promise<void>
  /** Is the caller still waiting for the person? Unset: yes. */
  transferOpen?: (callId: string, attempt: number) => Promise<boolean>
}

type Base = { callId: string; attempt: number; callRef: string; at: number }

/** The leg's last words, then its hang-up (on `call.speak.ended`, the state marked `bye`). */
async function goodbye(deps: WarmLegDeps, state: LegState, words: string): Promise<void> {
  const { b: _brief, ...rest } = state
  await deps.command('speak', { payload: words, ...SPOKEN, client_state: encodeLegState({ ...rest, e: 'bye' }) }).catch(() => null)
}

/** A webhook of a warm transfer's leg (`state.l === 'warm'`); `base.callRef` is the leg's own reference. */
export async function warmLegEvent(hook: TelnyxWebhook, state: LegState, base: Base, deps: WarmLegDeps): Promise<void> {
  const legRef = base.callRef
  switch (hook.eventType) {
    case 'call.answered': {
      await deps.emit({ ...base, type: 'transfer_answered', legRef })
      const res = await deps
        .command('gather_using_speak', {
          payload: `${state.b ?? ''} Press ${TELNYX_WARM_TAKE_KEY} to take the call.`.trim(),
          ...SPOKEN,
          minimum_digits: 1,
          maximum_digits: 1,
          maximum_tries: 1,
          timeout_millis: TELNYX_WARM_KEY_MS,
        })
        .catch((err: Error) => err)
      if (res instanceof Response && res.ok) return
      // The person cannot be briefed: their leg is let go and the agent tells the caller.
      await deps.command('hangup', {}).catch(() => null)
      await deps.emit({ ...base, type: 'transfer_ended', outcome: 'failed', error: `Telnyx would not brief the person (${res instanceof Response ? `HTTP ${res.status}` : res.message})` })
      return
    }
    case 'call.gather.ended': {
      // The person hung up mid-brief: their call.hangup says so.
      if (hook.payload.status === 'call_hangup') return
      if (hook.payload.digits === TELNYX_WARM_TAKE_KEY) {
        if (deps.transferOpen && !(await deps.transferOpen(state.c, state.a))) return goodbye(deps, state, WARM_GONE_WORDS)
        await deps.emit({ ...base, type: 'transfer_accepted', legRef })
        return
      }
      await deps.emit({ ...base, type: 'transfer_ended', outcome: 'declined' })
      return goodbye(deps, state, WARM_DECLINED_WORDS)
    }
    case 'call.speak.ended':
      if (state.e === 'bye') await deps.command('hangup', {}).catch(() => null)
      return
    case 'call.hangup': {
      // originator_cancel: we hung the leg up ourselves (the caller left), the chart already knows.
      if (hook.payload.hangup_cause === 'originator_cancel') return
      const outcome = transferOutcome(hook.payload.hangup_cause)
      const seconds = outcome === 'answered' ? hangupSeconds(hook) : undefined
      await deps.emit({
        ...base,
        type: 'transfer_ended',
        outcome,
        ...(seconds !== undefined ? { seconds } : {}),
        ...(outcome === 'failed' ? { error: `Telnyx could not call the person (${String(hook.payload.hangup_cause ?? 'no cause')})` } : {}),
      })
      return
    }
    default:
      // call.initiated, call.bridged, call.dtmf.received (the gather reports the key): nothing for the chart.
      return
  }
}
