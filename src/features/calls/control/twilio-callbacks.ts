/**
 * Twilio's webhooks for calls: status callbacks (`POST /telephony/twilio/status?call=…&attempt=…`),
 * asynchronous answering-machine verdicts (`POST /telephony/twilio/amd?call=…&attempt=…`)
 * and the incoming-call webhook (`POST /telephony/twilio/voice`, set as the number's Voice URL),
 * which answers TwiML connecting the call to the media bridge, and a transfer's callbacks
 * (`/telephony/twilio/transfer/answered` and `/ended`, the `<Dial action>`, answered `<Hangup/>`),
 * and a warm transfer's leg (`/telephony/twilio/warm/leg`, its status; `/warm/reply`, its `<Gather>`; `/warm/joined`, the caller's `<Dial action>` after the conference). All verify X-Twilio-Signature over
 * the public URL Twilio requested (PUBLIC_BASE_URL + path + query) and the form parameters.
 */
import { Elysia } from 'elysia'
import type { Clock } from '../../../clock'
import { newId } from '../../../ids'
import { HANG_UP_TWIML, streamTwiml, type TwilioTelephony } from '../../../providers/telephony/twilio'

const HANG_UP = '<?xml version="1.0" encoding="UTF-8"?><Response><Reject reason="busy"/></Response>'

export function twilioCallbacks(deps: {
  twilio: TwilioTelephony
  clock: Clock
  publicBaseUrl: string
  /** Answers an incoming call: the call it became, or null (nobody takes it). */
  answer: (call: { from: string; to: string; callRef: string; at: number }) => Promise<{ callId: string } | null>
}) {
  const publicUrl = (request: Request) => {
    const u = new URL(request.url)
    return `${deps.publicBaseUrl.replace(/\/$/, '')}${u.pathname}${u.search}`
  }
  const formOf = async (request: Request, body: unknown) => Object.fromEntries(new URLSearchParams(typeof body === 'string' ? body : await request.text()))
  return new Elysia({ prefix: '/telephony/twilio' })
    .post(
      '/status',
      async ({ request, body, set }) => {
        const ok = await deps.twilio.statusCallback(publicUrl(request), await formOf(request, body), request.headers.get('x-twilio-signature'), deps.clock.now())
        set.status = ok ? 204 : 403
        return ok ? null : { error: 'X-Twilio-Signature does not verify' }
      },
      { detail: { hide: true } },
    )
    .post(
      '/transfer/:kind',
      async ({ request, body, params, set }) => {
        const kind = params.kind === 'answered' ? 'answered' : params.kind === 'ended' ? 'ended' : null
        if (!kind) {
          set.status = 404
          return { error: 'no such transfer callback' }
        }
        const ok = await deps.twilio.transferCallback(kind, publicUrl(request), await formOf(request, body), request.headers.get('x-twilio-signature'), deps.clock.now())
        if (!ok) {
          set.status = 403
          return { error: 'X-Twilio-Signature does not verify' }
        }
        if (kind === 'answered') {
          set.status = 204
          return null
        }
        set.headers['content-type'] = 'text/xml'
        return HANG_UP_TWIML
      },
      { detail: { hide: true } },
    )
    .post(
      '/warm/:kind',
      async ({ request, body, params, set }) => {
        const kind = params.kind === 'leg' || params.kind === 'reply' || params.kind === 'joined' ? params.kind : null
        if (!kind) {
          set.status = 404
          return { error: 'no such warm transfer callback' }
        }
        const twiml = await deps.twilio.warmCallback(kind, publicUrl(request), await formOf(request, body), request.headers.get('x-twilio-signature'), deps.clock.now())
        if (twiml === null) {
          set.status = 403
          return { error: 'X-Twilio-Signature does not verify' }
        }
        if (kind === 'leg') {
          set.status = 204
          return null
        }
        set.headers['content-type'] = 'text/xml'
        return twiml
      },
      { detail: { hide: true } },
    )
    .post(
      '/amd',
      async ({ request, body, set }) => {
        const ok = await deps.twilio.amdCallback(publicUrl(request), await formOf(request, body), request.headers.get('x-twilio-signature'), deps.clock.now())
        set.status = ok ? 204 : 403
        return ok ? null : { error: 'X-Twilio-Signature does not verify' }
      },
      { detail: { hide: true } },
    )
    .post(
      '/voice',
      async ({ request, body, set }) => {
        const params = await formOf(request, body)
        if (!deps.twilio.verify(publicUrl(request), params, request.headers.get('x-twilio-signature'))) {
          set.status = 403
          return { error: 'X-Twilio-Signature does not verify' }
        }
        const answered = await deps.answer({ from: params.From ?? '', to: params.To ?? '', callRef: params.CallSid ?? newId('tw'), at: deps.clock.now() })
        set.headers['content-type'] = 'text/xml'
        return answered ? streamTwiml(deps.publicBaseUrl, answered.callId, '') : HANG_UP
      },
      { detail: { hide: true } },
    )
}
