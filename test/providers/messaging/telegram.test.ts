/**
 * The Telegram adapter against a local Bot API: identity, webhook, text and media sends in the Bot
 * API's wire format, refusals (a bad token redacted from the message, a blocked chat), file
 * downloads, Update parsing and the secret-token check.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { PlatformRefused } from '../../../src/providers/messaging/port'
import { inboundOf, secretMatches, TelegramBotApi, TelegramError, TelegramPlatform } from '../../../src/providers/messaging/telegram'
import { startTelegramFake, type TelegramFake, textUpdate } from '../../fakes/telegram'

const TOKEN = '7000000001:AAHfakeTokenForTestsOnly_abcdefghijk'
let fake: TelegramFake

beforeAll(() => {
  fake = startTelegramFake()
  fake.bots.set(TOKEN, { id: 7000000001, username: 'bean_there_bot', first_name: 'Bean There' })
})
afterAll(() => fake.stop())

test('getMe names the bot; setWebhook records the URL and secret; a bad token is refused without leaking it', async () => {
  const api = new TelegramBotApi(TOKEN, fake.url)
  expect(await api.getMe()).toEqual({ id: '7000000001', username: 'bean_there_bot', name: 'Bean There' })
  expect(await api.setWebhook('https://example.com/hook', 'sec_ret-1')).toBe(true)
  expect(fake.webhooks.get(7000000001)).toEqual({ url: 'https://example.com/hook', secret: 'sec_ret-1' })
  const bad = '7000000002:AAHnotARealTokenAtAll_000000000000'
  const err = await new TelegramBotApi(bad, fake.url).getMe().catch((e) => e)
  expect(err).toBeInstanceOf(TelegramError)
  expect(err).toMatchObject({ code: '401', status: 401 })
  expect(err.message).toContain('Unauthorized')
  expect(err.message).not.toContain(bad)
})

test('text and media go out as sendMessage / sendPhoto / sendDocument; a blocked chat and a template are refused', async () => {
  const platform = new TelegramPlatform(fake.url, async (bot) => (bot === '7000000001' ? TOKEN : null))
  const text = await platform.send({ from: '7000000001', to: '555001', content: { type: 'text', text: 'Hello!' } })
  expect(text.platformMessageId).toMatch(/^\d+$/)
  await platform.send({ from: '7000000001', to: '555001', content: { type: 'media', media: { type: 'image', url: 'https://example.com/a.png', caption: 'Our menu' } } })
  await platform.send({ from: '7000000001', to: '555001', content: { type: 'media', media: { type: 'file', url: 'https://example.com/a.pdf' } } })
  expect(fake.sent.slice(-3).map((m) => [m.method, m.body])).toEqual([
    ['sendMessage', { chat_id: 555001, text: 'Hello!' }],
    ['sendPhoto', { chat_id: 555001, photo: 'https://example.com/a.png', caption: 'Our menu' }],
    ['sendDocument', { chat_id: 555001, document: 'https://example.com/a.pdf' }],
  ])
  fake.blocked.add(555002)
  const blocked = await platform.send({ from: '7000000001', to: '555002', content: { type: 'text', text: 'Hi' } }).catch((e) => e)
  expect(blocked).toBeInstanceOf(PlatformRefused)
  expect(blocked).toMatchObject({ code: '403' })
  expect(blocked.message).toContain('blocked')
  const template = await platform.send({ from: '7000000001', to: '555001', content: { type: 'template', template: { name: 'x', language: 'en', variables: [] } } }).catch((e) => e)
  expect(template).toBeInstanceOf(PlatformRefused)
  const unknown = await platform.send({ from: '999', to: '555001', content: { type: 'text', text: 'Hi' } }).catch((e) => e)
  expect(unknown).toMatchObject({ code: 'not_connected' })
})

test('a file is fetched with getFile and the file URL', async () => {
  fake.files.set('photo-big', { bytes: new Uint8Array([1, 2, 3, 4]), mime: 'image/jpeg' })
  const got = await new TelegramBotApi(TOKEN, fake.url).download('photo-big', 1_000)
  expect([...got.bytes]).toEqual([1, 2, 3, 4])
  expect(got.mime).toBe('image/jpeg')
  await expect(new TelegramBotApi(TOKEN, fake.url).download('photo-big', 2)).rejects.toThrow('over 2 bytes')
})

test('Updates: text, the largest photo size with its caption, a shared own contact; group chats and edits are not taken', () => {
  expect(inboundOf(textUpdate(1, 555001, 'Hi there'))).toMatchObject({ chatId: '555001', text: 'Hi there', name: 'Asha', phone: null, media: null, at: 1732400000000 })
  const photo = {
    update_id: 2,
    message: { message_id: 2, date: 1, chat: { id: 5, type: 'private' }, from: { id: 5, first_name: 'A' }, caption: 'this one', photo: [{ file_id: 'small' }, { file_id: 'big' }] },
  }
  expect(inboundOf(photo)).toMatchObject({ text: 'this one', media: { fileId: 'big', type: 'image', caption: 'this one' } })
  const contact = { update_id: 3, message: { message_id: 3, date: 1, chat: { id: 5, type: 'private' }, from: { id: 5, first_name: 'A' }, contact: { phone_number: '14155550199', user_id: 5 } } }
  expect(inboundOf(contact)).toMatchObject({ phone: '+14155550199', text: '[contact shared]' })
  expect(inboundOf({ update_id: 4, message: { message_id: 4, date: 1, chat: { id: -100, type: 'group' }, text: 'hi all' } })).toBeNull()
  expect(inboundOf({ update_id: 5 })).toBeNull()
})

test('the secret token must match exactly', () => {
  expect(secretMatches('abc', 'abc')).toBe(true)
  expect(secretMatches('abd', 'abc')).toBe(false)
  expect(secretMatches(null, 'abc')).toBe(false)
  expect(secretMatches('abcd', 'abc')).toBe(false)
})
