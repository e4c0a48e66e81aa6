/** Usage: the ledger of billable units (replies, call minutes, messages) and what they cost. */
import { defineFeature } from '../feature'
import { UsageLedger } from './ledger'

export const usageFeature = defineFeature({
  name: 'usage',
  async build(kernel) {
    return { services: { ledger: await UsageLedger.open(kernel.store) } }
  },
})

// Re-exported for other features (they import from this index, never from inner files).
export { monthStart, type UsageLedger } from './ledger'
