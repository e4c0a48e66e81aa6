/** GET /usage and the console wallet: docs/spec.md "Usage answer", field for field. */
import { t } from 'elysia'
import { BodyInt } from '../../http/body-types'

export const UsageQuery = t.Object({
  // docs/spec.md Limits: usage `days` 1–90 (default 30).
  days: t.Optional(t.Integer({ minimum: 1, maximum: 90, default: 30, description: 'UTC days of `daily`, today included: 1–90 (default 30)' })),
})

const Micro = t.Integer({ description: 'micro-units of the workspace currency' })

export const WalletSchema = t.Object({
  balanceMicro: Micro,
  availableMicro: t.Integer({ description: 'balance less money held for rent renewing within 7 days' }),
  heldMicro: Micro,
  creditMicro: t.Integer({ description: "what is left of this month's plan credit (part of the balance)" }),
  creditExpiresAt: t.Union([t.String(), t.Null()], { description: 'when the unspent plan credit expires (the next 1st, UTC); null on a plan without credit' }),
})

export const UsageAnswer = t.Object({
  plan: t.String(),
  currency: t.String(),
  period: t.Object({ start: t.String(), end: t.String({ description: 'exclusive: the 1st of the next UTC month' }) }),
  replies: t.Object({
    used: t.Integer({ minimum: 0, description: "replies this period counted against the allowance: the whole account's (developer and customers)" }),
    included: t.Union([t.Integer(), t.Null()]),
    metered: t.Boolean(),
    stopped: t.Boolean(),
  }),
  wallet: t.Optional(t.Union([WalletSchema, t.Null()])),
  billedTo: t.Optional(t.Literal('developer')),
  daily: t.Array(t.Object({ day: t.String({ description: 'YYYY-MM-DD (UTC)' }), replies: t.Integer({ minimum: 0 }) })),
})

export const TopUpBody = t.Object(
  {
    // Up to 10^12 micro-units (a million units) in one top-up: larger is a typo, not a payment.
    creditMicro: BodyInt({ minimum: 1, maximum: 1_000_000_000_000, description: 'micro-units to add to the balance, 1 to 10^12' }),
  },
  { additionalProperties: false },
)
