/** `POST /conversations/{id}/reply` (docs/spec.md Conversations): the developer's agent answers on the chat app. */

import { Elysia, t } from 'elysia'
import { type RateRule, v1RateRule } from '../../catalog/limits'
import type { PlanId } from '../../catalog/plans'
import type { Clock } from '../../clock'
import type { Coordination } from '../../coordination/port'
import { answers, v1Errors } from '../../http/docs'
import { countRequest } from '../../http/rate-limit'
import type { KernelHttp } from '../../kernel/feature'
import type { Replies } from './reply'
import { MAX_MEDIA_URL, MAX_REPLY_TEXT } from './reply-rules'
import type { MessagingTotals } from './summary'

const Totals = t.Object({
  from: t.String(),
  to: t.String(),
  timezone: t.String(),
  grain: t.Union([t.Literal('day'), t.Literal('hour')]),
  sent: t.Integer(),
  delivered: t.Integer(),
  read: t.Integer(),
  failed: t.Integer(),
  noReceipt: t.Integer(),
  received: t.Integer(),
  series: t.Array(t.Object({ bucket: t.String(), sent: t.Integer(), received: t.Integer() })),
  errors: t.Array(t.Object({ error: t.String(), n: t.Integer() })),
  cost: t.Object({ currency: t.String(), totalMicro: t.Integer(), complete: t.Boolean(), byCategory: t.Array(t.Object({ category: t.String(), messages: t.Integer(), costMicro: t.Integer() })) }),
})

const Reply = t.Object(
  {
    text: t.Optional(t.String({ maxLength: MAX_REPLY_TEXT, description: 'only while the 24-hour window is open' })),
    media: t.Optional(
      t.Object(
        {
          type: t.Union([t.Literal('image'), t.Literal('video'), t.Literal('audio'), t.Literal('file')]),
          url: t.String({ maxLength: MAX_MEDIA_URL, description: 'a public https link' }),
          caption: t.Optional(t.String({ maxLength: 1024, description: 'image or video only' })),
          filename: t.Optional(t.String({ maxLength: 240, description: 'file (document) only' })),
        },
        { additionalProperties: false },
      ),
    ),
    form: t.Optional(t.Union([t.String(), t.Object({ name: t.String() }, { additionalProperties: false })], { description: "a published form of the number's agent" })),
    template: t.Optional(
      t.Object(
        {
          name: t.String(),
          language: t.Optional(t.String()),
          variables: t.Optional(t.Array(t.String())),
          buttonVariables: t.Optional(t.Array(t.String())),
          headerMediaUrl: t.Optional(t.String()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'exactly one of text, media, form, template' },
)

export function chatappSummaryV1(deps: { context: KernelHttp['v1']; totals: MessagingTotals }) {
  return new Elysia({ prefix: '/chatapp', detail: { tags: ['Usage'] } }).use(deps.context).get('/summary', ({ query, workspace }) => deps.totals.summary(workspace, query), {
    query: t.Object({
      days: t.Optional(t.Integer({ minimum: 1, maximum: 90, description: '1–90 local days back from today (default 7)' })),
      from: t.Optional(t.String({ description: 'first local day, YYYY-MM-DD (with to; at most 366 days)' })),
      to: t.Optional(t.String({ description: 'last local day, YYYY-MM-DD, inclusive' })),
    }),
    detail: { summary: 'Messaging totals: receipts, received, series, errors and cost, in the workspace time zone', responses: answers({ 200: Totals, ...v1Errors(400) }) },
  })
}

/** docs/spec.md Errors: POST reply answers 429: the plan's `replies` a minute per key (src/catalog/limits.ts). */
const replyRate = (plan: PlanId): RateRule => v1RateRule('v1-replies', 'replies', plan)

export function messagingV1(deps: { context: KernelHttp['v1']; replies: Replies; coordination: Coordination; clock: Clock }) {
  return new Elysia({ prefix: '/conversations', detail: { tags: ['Conversations'] } })
    .use(deps.context)
    .onBeforeHandle({ as: 'local' }, async ({ principal, set }) => {
      await countRequest(deps.coordination, replyRate(principal.developer.plan), principal.key.id, deps.clock.now(), set.headers as Record<string, unknown>)
    })
    .post('/:id/reply', ({ params, body, workspace }) => deps.replies.reply(workspace, params.id, body), {
      idempotent: true,
      params: t.Object({ id: t.String() }),
      body: Reply,
      headers: t.Object({ 'idempotency-key': t.Optional(t.String({ description: 'repeat safely for 24 hours' })) }),
      detail: {
        summary: 'Reply in a chat-app conversation (numbers with external agents on)',
        description:
          "409: external agents off for the number, a teammate took it over, the customer's 24-hour window closed (send a template), the customer opted out, or the number is disconnected. 429 (Retry-After): the plan's replies a minute for this key. 502: the messaging platform refused it (the Idempotency-Key is released).",
        responses: answers({ 200: t.Object({ ok: t.Literal(true) }), ...v1Errors(400, 403, 404, 409, 429, 502) }),
      },
    })
}
