/**
 * The wallet against the ledger, in process on the manual clock: whatever the order acts are
 * recorded in — a call's minutes dated into a closed month, months of rent settled late — the
 * balance equals what the ledger says: top-ups − each month's spend beyond its credit + this
 * month's unspent credit.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ManualClock } from '../../../src/clock'
import { loadConfig } from '../../../src/config'
import { phoneNumbersFeature } from '../../../src/features/phone-numbers'
import { usageFeature } from '../../../src/features/usage'
import { tenancyFeature } from '../../../src/features/workspaces'
import type { WorkspaceDoc } from '../../../src/kernel/tenancy'
import { createLogger } from '../../../src/logger'
import { buildServices, type Services } from '../../../src/services'

const DAY = 86_400_000
// Stated, not read from src/catalog (docs/api/billing.md): payg's plan credit a month is 5 USD, a
// standard voice minute 60,000 micro-units, a premium one 120,000.
const CREDIT = 5_000_000
let dir: string
let services: Services
let clock: ManualClock

const monthStartOf = (ms: number) => {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}
const nextMonth = (ms: number) => {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}

/** The balance as the ledger says it, month by month. */
async function fromLedger(dev: WorkspaceDoc, topUps: number): Promise<number> {
  const records = await services.of(usageFeature).ledger.records.find({ developerId: dev.id })
  const byMonth = new Map<string, number>()
  for (const r of records) byMonth.set(r.createdAt.slice(0, 7), (byMonth.get(r.createdAt.slice(0, 7)) ?? 0) + r.costMicro)
  const current = new Date(clock.now()).toISOString().slice(0, 7)
  let balance = topUps
  for (const [month, spent] of byMonth) if (month !== current) balance -= Math.max(0, spent - CREDIT)
  const now = byMonth.get(current) ?? 0
  return balance - Math.max(0, now - CREDIT) + Math.max(0, CREDIT - now)
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wallet-'))
  services = await buildServices(
    loadConfig({
      DATA_DIR: dir,
      SERVICE_CLOCK: 'manual',
      LOG_LEVEL: 'silent',
      PORT: '0',
      CONSOLE_TOKEN: 'wallet-test-console-token-0123456789',
      SECRET_KEY: 'wallet-test-secret-key-0123456789abcdef',
    }),
    createLogger('silent'),
  )
  clock = services.clock as ManualClock
  // Start at 01:00 on the 1st of a month.
  clock.advance(nextMonth(clock.now()) + 3_600_000 - clock.now())
})
afterAll(async () => {
  await services.close()
  rmSync(dir, { recursive: true, force: true })
})

test('late minutes and late rent land in closed months, and the balance still equals the ledger', async () => {
  const { meter, wallet } = services.of(usageFeature)
  const dev = await services.of(tenancyFeature).workspaces.createDeveloper({ name: 'Late', plan: 'payg' })
  await wallet.topUp(dev, 10_000_000)
  const month0 = clock.now()
  // 100 standard minutes: 6 USD against the 5 USD credit.
  await meter.charge({ id: 'use_t_1', workspaceId: dev.id, act: { kind: 'call_minute', seconds: 6_000, tier: 'standard' } })
  expect((await wallet.compute(dev)).balanceMicro).toBe(10_000_000 + CREDIT - 100 * 60_000) // 9 USD

  clock.advance(nextMonth(clock.now()) + DAY - clock.now())
  const w1 = await wallet.compute(dev)
  expect(w1).toMatchObject({ balanceMicro: 10_000_000 - 1_000_000 + CREDIT, creditMicro: CREDIT })
  expect(w1.balanceMicro).toBe(await fromLedger(dev, 10_000_000))

  // A call that ended before the 1st is charged now, dated when it ended: last month's spend grows.
  await meter.charge({ id: 'use_t_2', workspaceId: dev.id, act: { kind: 'call_minute', seconds: 60, tier: 'premium' }, at: monthStartOf(clock.now()) - 60_000 })
  const w2 = await wallet.compute(dev)
  expect(w2.balanceMicro).toBe(w1.balanceMicro - 120_000) // one premium minute
  expect(w2.balanceMicro).toBe(await fromLedger(dev, 10_000_000))

  // A number rented now and not looked at for two months: three months of rent, dated when each began.
  await services.of(phoneNumbersFeature).numbers.add(dev.id, { number: '+14155550777', source: 'rented' })
  clock.advance(62 * DAY)
  const w3 = await meter.settledWallet(dev)
  const rent = await services.of(usageFeature).ledger.records.find({ developerId: dev.id, kind: 'phone_rent' })
  expect(rent.length).toBe(3)
  expect(new Set(rent.map((r) => r.createdAt.slice(0, 7))).size).toBe(3)
  expect(w3.balanceMicro).toBe(await fromLedger(dev, 10_000_000))
  // A second look charges nothing more.
  await meter.settledWallet(dev)
  expect(await services.of(usageFeature).ledger.records.count({ developerId: dev.id, kind: 'phone_rent' })).toBe(3)
  expect(month0).toBeLessThan(clock.now())
})

test("the reply gate's kept count agrees with the ledger as replies arrive at any pace", async () => {
  const { meter } = services.of(usageFeature)
  const dev = await services.of(tenancyFeature).workspaces.createDeveloper({ name: 'Counts', plan: 'pro' })
  let n = 0
  for (const step of [0, 200, 700, 1_000, 3_000, 4_900, 5_100, 60_000, 400, 10_000]) {
    clock.advance(step)
    for (let i = 0; i < 3; i++) await meter.charge({ id: `use_count_${n++}`, workspaceId: dev.id, act: { kind: 'reply' } })
    const gate = await meter.replyAllowance(dev)
    const exact = await meter.replyAllowance(dev, { exact: true })
    expect(exact.used).toBe(n)
    expect(gate.used).toBe(n)
  }
})
