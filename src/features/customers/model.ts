/** Customer (v1) request and response schemas (docs/spec.md Customer, Customers endpoints). */
import { t } from 'elysia'
import { BodyInt } from '../../http/body-types'
import { pageQuery } from '../../http/pagination'

const MetadataValue = t.Union([t.String(), t.Number(), t.Boolean()])
export const EXTERNAL_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$'

const ExternalId = t.String({
  pattern: EXTERNAL_ID_PATTERN,
  description: '1–128 letters, digits, ".", "_", ":" or "-"',
})

export const CreateCustomer = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 120 }),
    externalId: t.Optional(t.Union([ExternalId, t.Null()])),
    metadata: t.Optional(t.Record(t.String(), MetadataValue, { description: 'up to 50 keys (1–40 characters); strings ≤ 500 characters, numbers or booleans; 8 KB in all' })),
    timezone: t.Optional(t.String({ maxLength: 64, description: 'IANA time zone name (default UTC)' })),
  },
  { additionalProperties: false },
)
export type CreateCustomer = typeof CreateCustomer.static

export const PatchCustomer = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 120 })),
    externalId: t.Optional(t.Union([ExternalId, t.Null()])),
    timezone: t.Optional(t.String({ maxLength: 64, description: 'IANA time zone name' })),
    allottedCallLines: t.Optional(t.Union([BodyInt({ minimum: 0, maximum: 10000 }), t.Null()])),
    metadata: t.Optional(t.Record(t.String(), t.Union([MetadataValue, t.Null()]), { description: 'merged: omitted keys kept, null removes a key' })),
  },
  { additionalProperties: false },
)
export type PatchCustomer = typeof PatchCustomer.static

export const ListCustomersQuery = t.Object({
  ...pageQuery(100, 25),
  externalId: t.Optional(t.String()),
  archived: t.Optional(t.Boolean({ description: 'true lists deleted customers awaiting erasure' })),
  createdAfter: t.Optional(t.String({ description: 'ISO 8601 instant or date (inclusive)' })),
  createdBefore: t.Optional(t.String({ description: 'ISO 8601 instant or date (exclusive)' })),
})
export type ListCustomersQuery = typeof ListCustomersQuery.static

export const Customer = t.Object({
  id: t.String(),
  name: t.String(),
  externalId: t.Union([t.String(), t.Null()]),
  metadata: t.Record(t.String(), MetadataValue),
  timezone: t.String(),
  allottedCallLines: t.Union([t.Integer(), t.Null()]),
  archivedAt: t.Union([t.String(), t.Null()]),
  eraseAfter: t.Union([t.String(), t.Null()]),
  createdAt: t.String(),
})
export type Customer = typeof Customer.static

export const CustomerDetail = t.Composite([
  Customer,
  t.Object({
    counts: t.Object({ agents: t.Integer(), phoneNumbers: t.Integer(), contacts: t.Integer() }),
    spendThisMonthMicro: t.Integer(),
  }),
])
export type CustomerDetail = typeof CustomerDetail.static

export const CreateKey = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 60 }),
    scope: t.Union([t.Literal('full'), t.Literal('build'), t.Literal('read')]),
  },
  { additionalProperties: false },
)

export const IssuedKey = t.Object({
  id: t.String(),
  name: t.String(),
  prefix: t.String(),
  scope: t.String(),
  key: t.String({ description: 'shown once, never again' }),
  createdAt: t.String(),
})

export const KeyRecord = t.Object({
  id: t.String(),
  name: t.String(),
  prefix: t.String(),
  scope: t.String(),
  lastUsedAt: t.Union([t.String(), t.Null()]),
  createdAt: t.String(),
})
