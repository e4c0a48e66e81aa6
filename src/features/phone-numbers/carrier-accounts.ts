/**
 * A number's own carrier account (docs/spec.md `carrierCredentials`: a number brought with the
 * credentials of the holder's own account at the carrier). Its fields are the carrier's to read
 * (Telnyx: `apiKey`, `connectionId`, `publicKey`; the telephony port's `CarrierAccount`); here they
 * are bounded, sealed under SECRET_KEY at rest like every stored provider key, and never shown.
 */
import type { SecretBox } from '../../crypto/secrets'
import { invalid, upstreamFailed } from '../../refusals'

/**
 * At most 8 fields (a carrier account names three or four: a key, an application, a public key),
 * each name ≤ 40 and value ≤ 500 characters (a Telnyx API key is ~60, a public key 44).
 */
export const ACCOUNT_MAX_FIELDS = 8
export const ACCOUNT_MAX_VALUE = 500

export type CarrierAccountFields = Record<string, string>

/**
 * The carrier's check of an account before it is kept (the calls' telephony: `verifyAccount`):
 * null when it takes it, `refused` with the carrier's reason; throws when the carrier could not be asked.
 */
export type AccountCheck = (account: CarrierAccountFields) => Promise<{ refused: string } | null>

export class CarrierAccounts {
  private check: AccountCheck = async () => null

  constructor(private readonly secrets: SecretBox) {}

  /** The carrier's check (registered by the calls feature, which holds the phone lines). */
  checkWith(check: AccountCheck): void {
    this.check = check
  }

  /**
   * The account as stored, once the carrier has taken it: sealed. 400 naming `carrierAccount` for
   * one with no fields or too many, or that the carrier refuses (its reason); 502 when the carrier
   * could not be asked. Nothing is kept either way.
   */
  async seal(account: CarrierAccountFields): Promise<string> {
    const fields = Object.entries(account).filter(([, v]) => v.trim() !== '')
    if (!fields.length) throw invalid('carrierAccount', 'names no credentials')
    if (fields.length > ACCOUNT_MAX_FIELDS) throw invalid('carrierAccount', `has ${fields.length} fields, at most ${ACCOUNT_MAX_FIELDS}`)
    const clean = Object.fromEntries(fields.map(([k, v]) => [k, v.trim()]))
    const verdict = await this.check(clean).catch((err: Error) => {
      throw upstreamFailed(`the carrier could not check the account: ${err.message}; it was not saved`)
    })
    if (verdict) throw invalid('carrierAccount', `${verdict.refused}; the account was not saved`)
    return this.secrets.seal(JSON.stringify(clean))
  }

  /** A stored account, opened. */
  open(sealed: string): CarrierAccountFields {
    return JSON.parse(this.secrets.open(sealed)) as CarrierAccountFields // cast: written by seal() above as a string map
  }
}
