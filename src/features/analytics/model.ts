/** GET /agents/{id}/analytics: docs/spec.md "Analytics answer", field for field. */
import { t } from 'elysia'

export const AnalyticsQuery = t.Object({
  // docs/spec.md Limits: analytics `days` 1–90 (default 30), `rows` 1–100 (default 20).
  days: t.Optional(t.Integer({ minimum: 1, maximum: 90, default: 30, description: 'UTC days back, today included: 1–90 (default 30)' })),
  rows: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 20, description: 'rows of knowledgeGaps and topQuestions: 1–100 (default 20)' })),
})

const Count = t.Integer({ minimum: 0 })

export const Analytics = t.Object({
  days: t.Integer(),
  totals: t.Object({
    conversations: Count,
    customers: Count,
    messages: Count,
    agent_replies: Count,
    leads: Count,
    escalated: Count,
    resolved: Count,
    human_handled: Count,
    searches: Count,
    unanswered: Count,
  }),
  daily: t.Array(t.Object({ day: t.String({ description: 'YYYY-MM-DD (UTC)' }), conversations: Count, replies: Count, leads: Count })),
  hourly: t.Array(t.Object({ hour: t.Integer({ minimum: 0, maximum: 23, description: 'UTC hour' }), conversations: Count })),
  channels: t.Array(t.Object({ kind: t.String(), conversations: Count })),
  knowledgeGaps: t.Array(t.Object({ query: t.String(), asked: Count, last_asked: t.String(), best_similarity: t.Number() })),
  topQuestions: t.Array(t.Object({ query: t.String(), asked: Count, answered: Count, last_asked: t.String() })),
  derived: t.Object({ neededAPerson: Count, answerRate: t.Union([t.Number(), t.Null()]) }),
})
export type Analytics = typeof Analytics.static
