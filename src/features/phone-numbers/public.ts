/** What other features may use of phone numbers: its ref (for `use`) and types; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { PhoneNumberService } from './service'

export interface PhoneNumbersServices {
  numbers: PhoneNumberService
}

export const phoneNumbersRef = featureRef<PhoneNumbersServices>('phone-numbers')

export type { PhoneNumberDoc } from './repository'
export type { BeforeRelease, PhoneNumberService } from './service'
