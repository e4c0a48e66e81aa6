/** Campaign schemas (docs/spec.md Campaign; docs/design.md's console create body). */
import { t } from 'elysia'
import { PURPOSE_MAX } from '../calls/public'
import { CAMPAIGN_STATUSES } from './repository'
import { MAX_RECIPIENTS, SCHEDULE_MAX_DAYS } from './service'

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])
const Status = t.Union(CAMPAIGN_STATUSES.map((s) => t.Literal(s)))

export const Counts = t.Object({
  recipients: t.Integer(),
  sent: t.Integer({ description: 'handed to the platform and not failed since (includes delivered, read, replied); calls: placed' }),
  delivered: t.Integer({ description: 'delivered to the phone (includes read, replied); calls: answered' }),
  read: t.Integer({ description: 'read (includes replied)' }),
  replied: t.Integer({ description: 'the customer answered on the chat app' }),
  failed: t.Integer(),
  skipped: t.Integer({ description: 'not sent: opted out, not a contact, or on the do-not-call list (calls)' }),
  voicemails: t.Integer({ description: 'calls: a machine answered and the agent left its voicemail message (included in delivered); 0 for broadcasts' }),
})

export const Campaign = t.Object({
  id: t.String({ description: 'cmp_…' }),
  agent: t.String(),
  name: t.String(),
  kind: t.Union([t.Literal('chatapp'), t.Literal('voice')]),
  status: Status,
  template: Nullable(t.String()),
  purpose: Nullable(t.String()),
  counts: Counts,
  scheduledAt: Nullable(t.String({ description: 'when the campaign starts (or started) itself; null: started by hand only' })),
  startedAt: Nullable(t.String()),
  finishedAt: Nullable(t.String()),
  createdAt: t.String(),
  lastError: Nullable(t.String({ description: 'why a failed campaign stopped (docs/api/campaigns.md)' })),
})

export const CreateCampaign = t.Object(
  {
    agent: t.String({ description: 'ag_… of this workspace' }),
    name: t.String({ minLength: 1, maxLength: 120 }),
    kind: t.Union([t.Literal('chatapp'), t.Literal('voice')]),
    template: t.Optional(t.String({ description: 'chatapp: an approved template on the agent’s chat-app number' })),
    purpose: t.Optional(t.String({ maxLength: PURPOSE_MAX, description: 'voice: the reason for calling, spoken first' })),
    recipients: t.Array(t.String({ maxLength: 40 }), { minItems: 1, maxItems: MAX_RECIPIENTS, description: 'phone numbers (E.164, with or without +); repeats are sent to once' }),
    scheduledAt: t.Optional(
      Nullable(
        t.String({
          maxLength: 40,
          description: `ISO 8601 instant in the future (service clock), at most ${SCHEDULE_MAX_DAYS} days ahead: the campaign starts itself then; null or absent: started by hand`,
        }),
      ),
    ),
  },
  { additionalProperties: false },
)

export const ListQuery = t.Object({
  status: t.Optional(Status),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 25, description: 'page size, 1–100 (default 25)' })),
  cursor: t.Optional(t.String({ description: 'nextCursor from the previous page' })),
})
