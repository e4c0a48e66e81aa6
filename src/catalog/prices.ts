/**
 * The price list: what each billable act costs the developer, per currency, in micro-units
 * (docs/spec.md Conventions 3). Our numbers (docs/spec.md names the acts, not their prices); docs/api/billing.md
 * ("Money and keys") carries the same table. A price is read when the act happens and written
 * into its ledger entry, so a later change of this list never re-prices the past.
 *
 * Sizing: a reply is about a cent (USD) / 80 paise (INR), what a chat turn on a hosted model plus
 * margin costs; a voice minute carries speech-to-text, the model and text-to-speech, premium
 * voices costing the voice vendor about twice as much; an analysis pass is one short model call.
 * Messaging rates are the chat-app platform's published per-message rates by category (India and
 * the US rounded); docs/spec.md's reply charge is 10% of them. A rented number's rent is monthly.
 */
export type Currency = 'INR' | 'USD'
export type VoiceTier = 'standard' | 'premium'
export type TemplateCategory = 'marketing' | 'utility' | 'authentication'
/** `service`: a free-form message inside the customer's 24-hour window. */
export type MessageCategory = TemplateCategory | 'service'

export interface PriceList {
  /** One agent reply on any text channel (test chat included). */
  replyMicro: number
  /** One started minute of a call, by the agent's voice tier. */
  voiceMinuteMicro: Record<VoiceTier, number>
  /** One model pass after a call (a summary, or the fields). */
  analysisPassMicro: number
  /** The messaging platform's rate for one message, by category. */
  messageMicro: Record<MessageCategory, number>
  /** A rented phone number, per month. */
  phoneRentMicro: number
}

export const PRICES: Record<Currency, PriceList> = {
  USD: {
    replyMicro: 10_000,
    voiceMinuteMicro: { standard: 60_000, premium: 120_000 },
    analysisPassMicro: 2_000,
    messageMicro: { marketing: 25_000, utility: 4_000, authentication: 4_000, service: 5_000 },
    phoneRentMicro: 1_500_000,
  },
  INR: {
    replyMicro: 800_000,
    voiceMinuteMicro: { standard: 5_000_000, premium: 10_000_000 },
    analysisPassMicro: 150_000,
    messageMicro: { marketing: 880_000, utility: 125_000, authentication: 125_000, service: 300_000 },
    phoneRentMicro: 150_000_000,
  },
}

/** docs/spec.md Limits: "Reply charge: 10% of the messaging platform's rate". */
export const REPLY_CHARGE_SHARE = 0.1

export const replyChargeMicro = (currency: Currency, category: MessageCategory): number => Math.round(PRICES[currency].messageMicro[category] * REPLY_CHARGE_SHARE)

/** Calls are billed by started minute (a 61-second call is two minutes), as carriers bill. */
export const billedMinutes = (seconds: number): number => (seconds > 0 ? Math.ceil(seconds / 60) : 0)
