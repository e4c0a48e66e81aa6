/**
 * A number's own carrier account (docs/spec.md `carrierCredentials`: a number brought with the
 * credentials of the holder's own account at the carrier). Its fields are the carrier's to read
 * (Telnyx: `apiKey`, `connectionId`, `publicKey`; the telephony port's `CarrierAccount`); here they
 * are bounded, sealed under SECRET_KEY at rest like every stored provider key, and never shown.
 */
import type { SecretBox } from '../../crypto/secrets'
import { invalid } from '../../kernel/refusals'

/**
 * At most 8 fields (a carrier account names three or four: a key, an application, a public key),
 * each name ≤ 40 and value ≤ 500 characters (a Telnyx API key is ~60, a public key 44).
 */
export const ACCOUNT_MAX_FIELDS = 8
export const ACCOUNT_MAX_VALUE = 500

export type CarrierAccountFields = Record<string, string>

export class CarrierAccounts {
  constructor(private readonly secrets: SecretBox) {}

  /** The account as stored: sealed; 400 naming `carrierAccount` for one with no fields or too many. */
  seal(account: CarrierAccountFields): string {
    const fields = Object.entries(account).filter(([, v]) => v.trim() !== '')
    if (!fields.length) throw invalid('carrierAccount', 'names no credentials')
    if (fields.length > ACCOUNT_MAX_FIELDS) throw invalid('carrierAccount', `has ${fields.length} fields, at most ${ACCOUNT_MAX_FIELDS}`)
    return this.secrets.seal(JSON.stringify(Object.fromEntries(fields.map(([k, v]) => [k, v.trim()]))))
  }

  /** A stored account, opened. */
  open(sealed: string): CarrierAccountFields {
    return JSON.parse(this.secrets.open(sealed)) as CarrierAccountFields // cast: written by seal() above as a string map
  }
}
