import { expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { SecretBox, SecretOpenError } from '../../../src/crypto/secrets'
import { newSigningSecret, signatureOf, signedHeaders, verifySignature } from '../../../src/features/webhooks/signing'

const KEY = 'k'.repeat(32)

test('signature = sha256=<hex HMAC-SHA256 of the raw body bytes>', () => {
  const body = '{"event":"lead.captured","data":{"name":"Zoë"}}'
  const hex = createHmac('sha256', 'whsec_test').update(Buffer.from(body, 'utf8')).digest('hex')
  expect(signatureOf('whsec_test', body)).toBe(`sha256=${hex}`)
  expect(verifySignature('whsec_test', new TextEncoder().encode(body), `sha256=${hex}`)).toBe(true)
  expect(verifySignature('whsec_test', `${body} `, `sha256=${hex}`)).toBe(false)
  expect(verifySignature('whsec_other', body, `sha256=${hex}`)).toBe(false)
  expect(verifySignature('whsec_test', body, null)).toBe(false)
})

test('signed headers carry the signature, event id and type', () => {
  const h = signedHeaders({ secret: 's', body: '{}', eventId: 'evt_1', eventType: 'call.analysed', extra: { 'x-service-webhook-id': 'wh_1' } })
  expect(h).toMatchObject({
    'content-type': 'application/json',
    'x-service-signature': signatureOf('s', '{}'),
    'x-service-event-id': 'evt_1',
    'x-service-event': 'call.analysed',
    'x-service-webhook-id': 'wh_1',
  })
})

test('signing secrets are long and distinct', () => {
  const a = newSigningSecret()
  expect(a).toMatch(/^whsec_[0-9a-z]{32}$/)
  expect(newSigningSecret()).not.toBe(a)
})

test('sealed secrets open under the same SECRET_KEY only; tampering is detected', () => {
  const box = new SecretBox(KEY)
  const sealed = box.seal('whsec_abc')
  expect(sealed).not.toContain('whsec_abc')
  expect(sealed).toStartWith('v1.')
  expect(box.seal('whsec_abc')).not.toBe(sealed) // a fresh IV every time
  expect(box.open(sealed)).toBe('whsec_abc')
  expect(() => new SecretBox('x'.repeat(32)).open(sealed)).toThrow(SecretOpenError)
  const parts = sealed.split('.')
  const flipped = Buffer.from(parts[3], 'base64url')
  flipped[0] ^= 1
  expect(() => box.open([parts[0], parts[1], parts[2], flipped.toString('base64url')].join('.'))).toThrow(SecretOpenError)
  expect(() => box.open('plain')).toThrow(SecretOpenError)
  expect(() => new SecretBox('short')).toThrow('32')
})
