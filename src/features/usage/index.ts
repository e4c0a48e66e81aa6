/** Usage: the ledger of billable units (replies, call minutes, messages) and what they cost. */
import { defineFeature } from '../feature'
import { UsageLedger } from './ledger'

export const usageFeature = defineFeature({
  name: 'usage',
  async build(kernel) {
    return { services: { ledger: await UsageLedger.open(kernel.store) } }
  },
})
