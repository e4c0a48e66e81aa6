/** What other features may use of usage: its ref (for `use`), types and helpers; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { UsageLedger } from './ledger'
import type { Meter } from './meter'
import type { WalletService } from './wallet'

export interface UsageServices {
  ledger: UsageLedger
  meter: Meter
  wallet: WalletService
}

export const usageRef = featureRef<UsageServices>('usage')

export { monthStart, type UsageLedger } from './ledger'
export { cannotPayMessage, type Meter, type ReplyAllowance } from './meter'
