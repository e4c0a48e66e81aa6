/**
 * bench:metering — what metering adds to every reply and call on a busy account.
 *
 *   node_modules/.bin/bun bench/metering.ts
 *
 * In process, on the embedded SQLite store in a temp dir and the manual clock: a pay-as-you-go
 * developer with CUSTOMERS customers, each renting a number, and a year of history (HISTORY
 * priced acts spread over 12 months). Then, ROUNDS times each, it times what a metered reply
 * costs — the allowance check (rent settled, wallet computed) and the charge (ledger record,
 * wallet re-computed for the low-balance check) — and the balance check before a call. Prints
 * p50/p95/p99 in milliseconds and whether a reply's metering p95 stays under the budget.
 *
 * Budget: 20 ms at p95 for check + charge together, about 4% of the fastest text reply (a hosted
 * model's turn takes 0.5–2 s): metering must stay noise next to the model even for an account
 * with a year of history and a hundred customers. (Each look costs a handful of indexed store
 * reads: this month's spend and reply count, rent marks, numbers; closed months are summed once
 * a month, not per charge.) Phone turns are not metered per reply, so calls pay only the balance
 * check once, before they ring.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ManualClock } from '../src/clock'
import { loadConfig } from '../src/config'
import { phoneNumbersFeature } from '../src/features/phone-numbers'
import { usageFeature } from '../src/features/usage'
import { tenancyFeature } from '../src/features/workspaces'
import { newWorkspaceDoc } from '../src/features/workspaces/public'
import { createLogger } from '../src/logger'
import { buildServices } from '../src/services'

const CUSTOMERS = 100
const HISTORY = 20_000
const ROUNDS = 300
const BUDGET_P95_MS = 20
const DAY = 86_400_000

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
const show = (name: string, xs: number[]) => console.log(`${name.padEnd(34)} p50 ${pct(xs, 50).toFixed(2)} ms   p95 ${pct(xs, 95).toFixed(2)} ms   p99 ${pct(xs, 99).toFixed(2)} ms`)

const dir = mkdtempSync(join(tmpdir(), 'bench-metering-'))
const services = await buildServices(
  loadConfig({
    DATA_DIR: dir,
    SERVICE_CLOCK: 'manual',
    LOG_LEVEL: 'silent',
    PORT: '0',
    CONSOLE_TOKEN: 'bench-console-token-0123456789abcdef',
    SECRET_KEY: 'bench-secret-key-0123456789abcdef-0123456789',
  }),
  createLogger('silent'),
)
try {
  const clock = services.clock as ManualClock
  const { workspaces, workspaceRepo } = services.of(tenancyFeature)
  const { numbers } = services.of(phoneNumbersFeature)
  const { meter, wallet, ledger } = services.of(usageFeature)
  const start = clock.now()
  const dev = await workspaces.createDeveloper({ name: 'Busy', plan: 'payg' })
  await workspaceRepo.update(dev.id, { developer: true })
  const customers: string[] = []
  for (let i = 0; i < CUSTOMERS; i++) {
    const id = `org_bench${i}`
    await workspaceRepo.insert(
      newWorkspaceDoc({ id, kind: 'customer', parentId: dev.id, name: `C${i}`, plan: 'payg', currency: 'USD', timezone: 'UTC', whiteLabel: false }, new Date(start).toISOString()),
    )
    await numbers.add(id, { number: `+1415600${String(i).padStart(4, '0')}`, source: 'rented' })
    customers.push(id)
  }
  const t0 = performance.now()
  for (let i = 0; i < HISTORY; i++) {
    const ws = i % 3 === 0 ? dev.id : customers[i % CUSTOMERS]!
    // Written straight into the ledger: the history is the setting, not what is timed.
    await ledger.record({
      id: `use_hist_${i}`,
      workspaceId: ws,
      developerId: dev.id,
      kind: 'reply',
      quantity: 1,
      unitPriceMicro: 10_000,
      costMicro: 10_000,
      createdAt: new Date(start + Math.floor((i / HISTORY) * 365 * DAY)).toISOString(),
    })
  }
  console.log(`history: ${HISTORY} priced acts over 12 months, ${CUSTOMERS} customers with a rented number each (written in ${((performance.now() - t0) / 1000).toFixed(1)} s)`)
  clock.advance(365 * DAY)
  await wallet.topUp(dev, 1_000_000_000_000)
  const customer = (await workspaceRepo.get(customers[0]!))!

  const check: number[] = []
  const charge: number[] = []
  const both: number[] = []
  const call: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    clock.advance(1_000)
    const a = performance.now()
    await meter.replyAllowance(customer)
    const b = performance.now()
    await meter.charge({ id: `use_bench_${i}`, workspaceId: customer.id, act: { kind: 'reply' } })
    const c = performance.now()
    await meter.checkCall(customer, 'standard')
    const d = performance.now()
    check.push(b - a)
    charge.push(c - b)
    both.push(c - a)
    call.push(d - c)
  }
  show('reply allowance check', check)
  show('reply charge', charge)
  show('reply metering (check + charge)', both)
  show('balance check before a call', call)
  const p95 = pct(both, 95)
  console.log(`reply metering p95 ${p95.toFixed(2)} ms ${p95 < BUDGET_P95_MS ? '<' : '>='} budget ${BUDGET_P95_MS} ms: ${p95 < BUDGET_P95_MS ? 'PASS' : 'FAIL'}`)
} finally {
  await services.close()
  rmSync(dir, { recursive: true, force: true })
}
