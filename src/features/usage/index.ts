/**
 * Usage: the ledger of billable acts, the meter that prices and records them, the developer's
 * wallet, rent of rented numbers, and GET /usage.
 */
import { defineFeature } from '../../kernel/feature'
import { notificationsRef } from '../notifications/public'
import { phoneNumbersRef } from '../phone-numbers/public'
import { tenancyRef } from '../workspaces/public'
import { usageConsole } from './console'
import { UsageLedger } from './ledger'
import { Meter } from './meter'
import { usageRef } from './public'
import { RentBook, type RentMarkDoc, rentMarksSpec } from './rent'
import { UsageReports } from './report'
import { usageV1 } from './v1'
import { WalletService } from './wallet'

export const usageFeature = defineFeature(usageRef, {
  async build(kernel, use) {
    const { workspaceRepo } = use(tenancyRef)
    const { numbers } = use(phoneNumbersRef)
    const { notifications } = use(notificationsRef)
    const { store, clock } = kernel
    const ledger = await UsageLedger.open(store)
    const rent = new RentBook({ ledger, workspaces: workspaceRepo, numbersOf: (ids) => numbers.heldByAny(ids), marks: await store.collection<RentMarkDoc>(rentMarksSpec), clock })
    const wallet = await WalletService.open(store, { ledger, rent, notifications, clock })
    const meter = new Meter({ ledger, wallet, rent, workspaces: workspaceRepo, clock })
    const reports = new UsageReports({ ledger, meter, clock })
    // Rent stops the day a number is released: the months begun until then are charged first (rent.ts).
    numbers.beforeRelease(async (number) => {
      const developer = await meter.payer(number.workspaceId)
      if (developer) await meter.settledWallet(developer)
    })
    return {
      services: { ledger, meter, wallet },
      v1: [usageV1({ context: kernel.http.v1, reports })],
      console: [usageConsole({ auth: kernel.http.console, wallet })],
    }
  },
})
