/**
 * Signing (docs/spec.md Authentication rule 7): `x-service-signature: sha256=<hex>`, the HMAC-SHA256 of
 * the raw body bytes under the endpoint's secret, plus the headers a receiver needs to route and
 * de-duplicate. The same scheme serves v1 and legacy deliveries.
 *
 * Verifying (receiver side): compute HMAC-SHA256 over the body bytes exactly as received, hex it,
 * compare with the header after `sha256=` in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { randomId } from '../../ids'

export const SIGNATURE_HEADER = 'x-service-signature'
export const EVENT_ID_HEADER = 'x-service-event-id'
export const EVENT_TYPE_HEADER = 'x-service-event'
export const WEBHOOK_ID_HEADER = 'x-service-webhook-id'
export const DELIVERY_ID_HEADER = 'x-service-delivery-id'
export const DELIVERY_ATTEMPT_HEADER = 'x-service-delivery-attempt'
export const USER_AGENT = 'AgentPlatform-Webhooks/1.0'

// 32 characters of our 32-letter alphabet = 160 bits, like API keys: beyond guessing.
const SECRET_CHARS = 32

export const newSigningSecret = (): string => `whsec_${randomId(SECRET_CHARS)}`

export const signatureOf = (secret: string, body: string | Uint8Array): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`

/** Constant-time check of a received signature header (tests and receivers' reference). */
export function verifySignature(secret: string, body: string | Uint8Array, header: string | null): boolean {
  if (!header) return false
  const expected = Buffer.from(signatureOf(secret, body))
  const given = Buffer.from(header)
  return expected.length === given.length && timingSafeEqual(expected, given)
}

export interface SignedHeadersInput {
  secret: string
  body: string
  eventId: string
  eventType: string
  extra?: Record<string, string>
}

export function signedHeaders(input: SignedHeadersInput): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [SIGNATURE_HEADER]: signatureOf(input.secret, input.body),
    [EVENT_ID_HEADER]: input.eventId,
    [EVENT_TYPE_HEADER]: input.eventType,
    ...(input.extra ?? {}),
  }
}
