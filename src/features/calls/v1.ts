/** Calls (v1): place, list, read, end or cancel, totals (docs/spec.md Calls). */
import { Elysia, t } from 'elysia'
import { answers, v1Errors } from '../../http/docs'
import { pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import type { CallTransfers } from './control/transfers'
import { Call, CallListItem, ListCallsQuery, PlaceCall, SummaryQuery, TransferCall } from './model'
import { presentCall, presentListedCall } from './records/present'
import type { CallService } from './service'

const Placed = t.Object({ id: t.String(), to: t.String({ description: 'the number called, E.164' }), status: t.String({ description: '`ringing`, or `scheduled` for a booked call' }) })
const CallTotals = t.Object({
  days: t.Integer(),
  timezone: t.String(),
  grain: t.Union([t.Literal('day'), t.Literal('hour')]),
  calls: t.Integer(),
  inbound: t.Integer(),
  outbound: t.Integer(),
  answered: t.Integer(),
  missed: t.Integer(),
  failed: t.Integer(),
  seconds: t.Number(),
  debitMicro: t.Integer(),
  surfaces: t.Object({ phone: t.Integer(), web: t.Integer(), chatapp: t.Integer() }),
  series: t.Array(t.Object({ bucket: t.String(), inbound: t.Integer(), outbound: t.Integer(), answered: t.Integer(), missed: t.Integer(), minutes: t.Number() })),
})

export function callsV1(deps: { context: KernelHttp['v1']; calls: CallService; transfers: CallTransfers }) {
  const { calls } = deps
  const Id = t.Object({ id: t.String() })
  return new Elysia({ prefix: '/calls', detail: { tags: ['Calls'] } })
    .use(deps.context)
    .post(
      '',
      async ({ body, workspace, set }) => {
        const placed = await calls.place(workspace, body)
        set.status = 202
        return placed
      },
      {
        idempotent: { bodyKey: 'idempotencyKey' },
        body: PlaceCall,
        headers: t.Object({
          'idempotency-key': t.Optional(t.String({ description: 'repeat safely for 24 hours (the body member idempotencyKey is the same; with the header, the body member is ignored)' })),
        }),
        detail: {
          responses: answers({ 202: Placed, ...v1Errors(402, 403, 409, 429, 502, 503) }),
          summary: 'Place a call (it opens with the spoken purpose)',
          description:
            "402: the balance cannot pay a first voice minute (Free: the month's included minutes are used up). 403: not a contact, or opted out / do-not-call. 409: no agent answers the phone, or the only number is brought without carrier credentials. 429 (Retry-After): calls a minute or call lines used up. 502: the phone network would not place it (recorded as failed). 503 (Retry-After): this instance is at capacity; nothing was placed.",
        },
      },
    )
    .get('', ({ query, workspace }) => paginate((limit, after) => calls.page(workspace, query, limit, after), query, 25, presentListedCall), {
      query: ListCallsQuery,
      detail: { responses: answers({ 200: pageSchema(CallListItem), ...v1Errors(400) }), summary: 'List calls, newest first (one row per try; waiting calls are not listed)' },
    })
    .get('/summary', ({ query, workspace }) => calls.totals(workspace, query.days ?? 7), {
      query: SummaryQuery,
      detail: { responses: answers({ 200: CallTotals, ...v1Errors(400) }), summary: 'Call totals, bucketed in the workspace time zone' },
    })
    .get('/:id', async ({ params, workspace }) => presentCall(await calls.get(workspace, params.id)), {
      params: Id,
      detail: { responses: answers({ 200: Call, ...v1Errors(404) }), summary: 'Read a call (its newest try), with transcript and recording' },
    })
    .post(
      '/:id/transfer',
      async ({ params, body, workspace, set }) => {
        const call = await deps.transfers.byHand(workspace, params.id, body.destination)
        set.status = 202
        return presentCall(call)
      },
      {
        params: Id,
        body: TransferCall,
        idempotent: true,
        detail: {
          responses: answers({ 202: Call, ...v1Errors(400, 403, 404, 409, 502) }),
          summary: "Transfer a live call to one of its agent's transfers",
          description:
            '202 once the phone network has taken the hand-off (`transfer` on the call; its end arrives as call.transfer_ended). 400 naming `destination` when the agent has no transfer of that name. 403 for a read-only key. 409 with `state` and the call when the call is not connected, is already being transferred, or is a browser call. 502 when the network refused the hand-off: the agent carries on with the caller. Inbound calls can be transferred too.',
        },
      },
    )
    .delete(
      '/:id',
      async ({ params, workspace, set }) => {
        const ended = await calls.end(workspace, params.id)
        set.status = ended.status
        return presentCall(ended.call)
      },
      {
        params: Id,
        detail: {
          responses: answers({ 200: Call, 202: Call, ...v1Errors(403, 404, 409) }),
          summary: 'Cancel a waiting call (200) or end a live one (202)',
          description:
            'A live call ends at once; its ending arrives with call.analysed and no retry follows. 409 with the report when it already ended, or when it rings from a brought number without carrier credentials.',
        },
      },
    )
}
