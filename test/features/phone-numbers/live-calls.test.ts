/** A number is not released while a call on it is live, and only its own workspace's calls count. */
import { expect, test } from 'bun:test'
import { refuseWhileLive } from '../../../src/features/phone-numbers/live-calls'
import type { PhoneNumberDoc } from '../../../src/features/phone-numbers/repository'
import { apiErrorOf } from '../../../src/http/refusals'
import { openSqliteStore } from '../../../src/store/sqlite'

const NUMBER = '+15550100001'

test('a live call from the number refuses its release; an ended one, or another workspace’s, does not', async () => {
  const store = await openSqliteStore(':memory:')
  const rows = await store.collection<{ [k: string]: unknown; id: string; callId: string; workspaceId: string; from: string | null; status: string }>({ name: 'call_tries', indexes: [] })
  const refuse = refuseWhileLive(store)
  const held = { id: 'pn_1', workspaceId: 'ws_a', number: NUMBER } as PhoneNumberDoc

  // The same number string held before by another workspace, with a call still ringing there.
  await rows.insert({ id: 'c_b:1', callId: 'c_b', workspaceId: 'ws_b', from: NUMBER, status: 'ringing' })
  await rows.insert({ id: 'c_old:1', callId: 'c_old', workspaceId: 'ws_a', from: NUMBER, status: 'ended' })
  expect(await refuse(held)).toBeUndefined()

  await rows.insert({ id: 'c_a:1', callId: 'c_a', workspaceId: 'ws_a', from: NUMBER, status: 'connected' })
  const refused = await refuse(held).catch((err: unknown) => err)
  expect(refused).toBeInstanceOf(Error)
  expect(apiErrorOf(refused)?.status).toBe(409)
  expect((refused as Error).message).toContain('c_a')
  await store.close()
})
