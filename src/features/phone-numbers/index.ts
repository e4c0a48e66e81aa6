/** Phone numbers: rented or brought in the console, each assignable to one agent, released there; listed on v1. */

import { randomBytes } from 'node:crypto'
import { SecretBox } from '../../crypto/secrets'
import { defineFeature, eraseCollections } from '../../kernel/feature'
import { isRefused } from '../../refusals'
import { agentsRef } from '../agents/public'
import { CarrierAccounts } from './carrier-accounts'
import { phoneNumbersConsole } from './console'
import { refuseWhileLive } from './live-calls'
import { phoneNumbersRef } from './public'
import { openPhoneNumbers, phoneNumbersSpec } from './repository'
import { PhoneNumberService } from './service'
import { phoneNumbersV1 } from './v1'

export const phoneNumbersFeature = defineFeature(phoneNumbersRef, {
  async build(kernel, use) {
    const { agents } = use(agentsRef)
    const repo = await openPhoneNumbers(kernel.store)
    const voiceNumberOf = (ws: string, id: string) =>
      agents.get(ws, id).then(
        (a) => a.phoneNumber ?? null,
        (err) => {
          if (isRefused(err, 'not_found')) return null
          throw err
        },
      )
    const numbers = new PhoneNumberService(
      repo,
      (ws, id) => agents.exists(ws, id),
      kernel.clock,
      (agentId, number) => agents.setPhoneNumber(agentId, number),
      voiceNumberOf,
      // SECRET_KEY is always set by the server; a bare buildServices (some tests) seals for this process only.
      new CarrierAccounts(new SecretBox(kernel.config.secretKey ?? randomBytes(32).toString('hex'))),
    )
    // First of the release hooks: a refusal comes before anything is settled.
    numbers.beforeRelease(refuseWhileLive(kernel.store))
    agents.onDelete((agent) => numbers.unassignAgent(agent.workspaceId, agent.id))
    kernel.customerHooks.onErased(eraseCollections(kernel.store, [phoneNumbersSpec]), 'phone numbers erased')
    return {
      services: { numbers },
      v1: [phoneNumbersV1({ context: kernel.http.v1, numbers })],
      console: [phoneNumbersConsole({ auth: kernel.http.console, numbers })],
    }
  },
})
