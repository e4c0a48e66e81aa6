/**
 * On WhatsApp a reply whose delivery a crash left `unknown` is still found by its receipts: the
 * reply goes out with its own id as `biz_opaque_callback_data`, which Meta echoes in every status.
 * The real service (WhatsApp Cloud API against its local fake) is killed right after Graph took the
 * reply and before its platform id was stored; after the restart the reply is `unknown`; Meta's
 * `delivered` status, which names only Graph's id and ours, then moves it to `delivered`.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { openStore } from '../../src/store'
import { startWhatsAppFake, whatsAppEnv, whatsAppNotification } from '../fakes/whatsapp'
import { childClient, freePort, startChildService } from '../support/child-service'

const TOKEN = 'answer-crash-wa-console-token-0123456'
const WA_TOKEN = 'EAAGfaketoken1234567890'
const SECRET = 'app-secret-for-tests'
const NUMBER = '+14155550380'
const PHONE_NUMBER_ID = '106540352242922'
const fake = startWhatsAppFake(WA_TOKEN)
const dataDir = mkdtempSync(join(tmpdir(), 'svc-answer-crash-wa-'))
const env = {
  SERVICE_CLOCK: 'manual',
  CONSOLE_TOKEN: TOKEN,
  LOG_LEVEL: 'silent',
  DATA_DIR: dataDir,
  ...whatsAppEnv(fake, { token: WA_TOKEN, appSecret: SECRET, verifyToken: 'verify', phoneNumberIds: { [NUMBER]: PHONE_NUMBER_ID } }),
}
let child: Subprocess | null = null

afterAll(() => {
  child?.kill('SIGKILL')
  fake.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

const deliveryOf = async (id: string) => {
  const store = await openStore({ dataDir })
  try {
    return (await (await store.collection<{ id: string; delivery?: Record<string, unknown> }>({ name: 'messages', indexes: [] })).get(id))?.delivery
  } finally {
    await store.close()
  }
}

const stop = async () => {
  child!.kill('SIGKILL')
  await child!.exited
  child = null
}

test('killed between Graph taking the reply and storing its id: `unknown` after the restart, then `delivered` by its receipt', async () => {
  const port = await freePort()
  const call = childClient(port)
  child = await startChildService(port, { ...env, SERVICE_CRASH_AT: 'answer.sent' })
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'WA', plan: 'scale' })).body
  const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Ava' })).body.id
  expect((await call('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200)
  expect((await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: NUMBER, source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
  const conversationId = (await call('POST', `/console/workspaces/${dev.id}/inbound`, TOKEN, { channel: 'chatapp', from: '+14155550381', to: NUMBER, text: 'Hello?' })).body.conversationId as string
  await child.exited
  expect(child.signalCode).toBe('SIGKILL')
  expect(fake.sent).toHaveLength(1)
  const ref = fake.sent[0]!.body.biz_opaque_callback_data as string
  expect(ref).toStartWith('msg_')

  child = await startChildService(port, env)
  const replies = (await call('GET', `/api/v1/conversations/${conversationId}/messages`, dev.key)).body.items.filter((m: { author: string }) => m.author === 'agent')
  expect(replies.map((m: { id: string }) => m.id)).toEqual([ref])
  await stop()
  // Not sent again: whether Graph took it could not be told.
  expect(fake.sent).toHaveLength(1)
  expect(await deliveryOf(ref)).toMatchObject({ status: 'unknown', error: { code: 'interrupted' } })

  child = await startChildService(port, env)
  const status = whatsAppNotification(SECRET, {
    metadata: { display_phone_number: '14155550380', phone_number_id: PHONE_NUMBER_ID },
    statuses: [{ id: 'wamid.FAKE1', status: 'delivered', timestamp: '1732400005', recipient_id: '14155550381', biz_opaque_callback_data: ref }],
  })
  const hooked = await fetch(`http://127.0.0.1:${port}/messaging/whatsapp/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': status.signature },
    body: status.raw,
  })
  expect(hooked.status).toBe(200)
  await stop()
  expect(await deliveryOf(ref)).toMatchObject({ status: 'delivered', platformMessageId: 'wamid.FAKE1' })
}, 60_000)
