/** The WhatsApp adapter's wire shapes and its webhook checks, without a server. */
import { describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { WhatsAppPlatform, whatsAppBody } from '../../../src/providers/messaging/whatsapp'

const platform = new WhatsAppPlatform({ accessToken: 't', appSecret: 'secret', verifyToken: 'v', baseUrl: 'http://127.0.0.1:1', version: 'v21.0', phoneNumberId: async () => null })

describe('WhatsApp message bodies', () => {
  test('media: image with caption, a file as a document with its filename, audio by link', () => {
    expect(whatsAppBody('+14155550101', { type: 'media', media: { type: 'image', url: 'https://x/y.png', caption: 'Menu' } })).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '14155550101',
      type: 'image',
      image: { link: 'https://x/y.png', caption: 'Menu' },
    })
    expect(whatsAppBody('+14155550101', { type: 'media', media: { type: 'file', url: 'https://x/a.pdf', filename: 'a.pdf' } })).toMatchObject({
      type: 'document',
      document: { link: 'https://x/a.pdf', filename: 'a.pdf' },
    })
    expect(whatsAppBody('+14155550101', { type: 'media', media: { type: 'audio', url: 'https://x/a.mp3' } })).toMatchObject({ type: 'audio', audio: { link: 'https://x/a.mp3' } })
  })

  test('a template without variables has no components; a form is an interactive flow', () => {
    expect(whatsAppBody('+1', { type: 'template', template: { name: 'hello', language: 'en', variables: [] } })).toMatchObject({
      type: 'template',
      template: { name: 'hello', language: { code: 'en' }, components: [] },
    })
    expect(whatsAppBody('+1', { type: 'form', form: { name: 'Booking' } })).toMatchObject({
      type: 'interactive',
      interactive: { type: 'flow', action: { name: 'flow', parameters: { flow_name: 'Booking', flow_message_version: '3' } } },
    })
  })

  test('a number with no phone-number id is refused before any request', async () => {
    await expect(platform.send({ from: '+14155550100', to: '+14155550101', content: { type: 'text', text: 'hi' } })).rejects.toThrow('no WhatsApp phone-number id')
  })
})

describe('WhatsApp webhook checks', () => {
  test('the handshake needs mode subscribe, our token and a challenge', () => {
    expect(platform.verifySubscription({ 'hub.mode': 'subscribe', 'hub.verify_token': 'v', 'hub.challenge': '42' })).toBe('42')
    expect(platform.verifySubscription({ 'hub.mode': 'subscribe', 'hub.verify_token': 'w', 'hub.challenge': '42' })).toBeNull()
    expect(platform.verifySubscription({ 'hub.mode': 'unsubscribe', 'hub.verify_token': 'v', 'hub.challenge': '42' })).toBeNull()
  })

  test('X-Hub-Signature-256 is HMAC-SHA256 of the exact raw body', () => {
    const raw = '{"object":"whatsapp_business_account","entry":[]}'
    const good = `sha256=${createHmac('sha256', 'secret').update(raw).digest('hex')}`
    expect(platform.verifySignature(raw, good)).toBe(true)
    expect(platform.verifySignature(`${raw} `, good)).toBe(false)
    expect(platform.verifySignature(raw, good.replace('sha256=', 'sha1='))).toBe(false)
    expect(platform.verifySignature(raw, null)).toBe(false)
  })

  test('button and list replies read as their titles; other types as [type]', async () => {
    const raw = JSON.stringify({
      entry: [
        {
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { display_phone_number: '14155550100', phone_number_id: '1' },
                messages: [
                  { from: '14155550101', id: 'a', timestamp: '1', type: 'interactive', interactive: { button_reply: { title: 'Yes' } } },
                  { from: '14155550101', id: 'b', timestamp: '2', type: 'sticker' },
                ],
              },
            },
          ],
        },
      ],
    })
    const got = await platform.notification(raw)
    expect(got.map((m) => [m.to, m.from, m.text])).toEqual([
      ['+14155550100', '+14155550101', 'Yes'],
      ['+14155550100', '+14155550101', '[sticker]'],
    ])
  })
})
