/**
 * Telnyx's webhook signature (https://developers.telnyx.com/docs/messaging/webhooks#webhook-signing,
 * and team-telnyx/telnyx-node's `webhooks.constructEvent`): `telnyx-signature-ed25519` is the
 * base64 Ed25519 signature, by the account's key pair, of `${telnyx-timestamp}|${raw body}`, the
 * timestamp in Unix seconds; the account's public key (Mission Control Portal, "Public Key") is
 * 32 raw bytes in base64. Checked with node:crypto's Ed25519, no library of its own.
 */
import { createPublicKey, type KeyObject, verify } from 'node:crypto'

/**
 * How old a signed webhook may be: telnyx-node's default tolerance, 300 s. A replayed webhook
 * older than this is refused even with its genuine signature.
 */
export const TELNYX_SIGNATURE_TOLERANCE_S = 300

/** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the 32 key bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

/** The account's public key from its base64 form; throws on one that is not 32 bytes. */
export function telnyxPublicKey(base64: string): KeyObject {
  const raw = Buffer.from(base64.trim(), 'base64')
  if (raw.length !== 32) throw new Error(`a Telnyx public key is 32 bytes in base64, this one is ${raw.length}`)
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' })
}

export type SignatureVerdict = { ok: true } | { ok: false; reason: string }

/** Verifies one webhook: its signature over `${timestamp}|${body}`, and that the timestamp is within the tolerance of `nowMs`. */
export function verifyTelnyxSignature(key: KeyObject, body: string, signature: string | null, timestamp: string | null, nowMs: number): SignatureVerdict {
  if (!signature || !timestamp) return { ok: false, reason: 'telnyx-signature-ed25519 and telnyx-timestamp are required' }
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'telnyx-timestamp is not a Unix time' }
  const bytes = Buffer.from(signature, 'base64')
  if (bytes.length !== 64 || !verify(null, Buffer.from(`${timestamp}|${body}`), key, bytes)) return { ok: false, reason: 'telnyx-signature-ed25519 does not verify' }
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > TELNYX_SIGNATURE_TOLERANCE_S) return { ok: false, reason: `telnyx-timestamp is more than ${TELNYX_SIGNATURE_TOLERANCE_S} s from now` }
  return { ok: true }
}
