/** Console: how the sandbox network's callee at a number behaves (docs/design.md's console table). */
import { Elysia, t } from 'elysia'
import { BodyInt } from '../../../http/body-types'
import { answers, consoleErrors } from '../../../http/docs'
import type { KernelHttp } from '../../../kernel/feature'
import { SANDBOX_PICKUPS, type SandboxNetwork } from '../../../providers/telephony/sandbox'
import { invalid } from '../../../refusals'
import { normalizePhone } from '../../contacts/public'

// Our bounds: a ring longer than 5 minutes or a call longer than the longest maxCallSeconds (1,200 s, docs/spec.md) describes no phone.
const MAX_RING_MS = 5 * 60_000
const MAX_HANGUP_MS = 1_200_000

const Phone = t.Object({
  pickup: t.Union(SANDBOX_PICKUPS.map((p) => t.Literal(p))),
  ringMs: t.Integer(),
  lines: t.Array(t.String()),
  hangupAfterMs: t.Union([t.Integer(), t.Null()]),
})

export function sandboxConsole(deps: { auth: KernelHttp['console']; sandbox: SandboxNetwork }) {
  return new Elysia({ prefix: '/sandbox', detail: { tags: ['Console'] } })
    .use(deps.auth)
    .put(
      '/phones/:number',
      async ({ params, body }) => {
        const number = normalizePhone(params.number)
        if (!number) throw invalid('number', `"${params.number}" is not a phone number`)
        return deps.sandbox.setPhone(number, { pickup: body.pickup, ringMs: body.ringMs ?? 0, lines: body.lines ?? [], hangupAfterMs: body.hangupAfterMs === undefined ? 30_000 : body.hangupAfterMs })
      },
      {
        params: t.Object({ number: t.String() }),
        body: t.Object(
          {
            pickup: t.Union(SANDBOX_PICKUPS.map((p) => t.Literal(p))),
            ringMs: t.Optional(BodyInt({ minimum: 0, maximum: MAX_RING_MS })),
            lines: t.Optional(t.Array(t.String({ maxLength: 500 }), { maxItems: 50 })),
            hangupAfterMs: t.Optional(t.Union([BodyInt({ minimum: 0, maximum: MAX_HANGUP_MS }), t.Null()])),
          },
          { additionalProperties: false },
        ),
        detail: { responses: answers({ 200: Phone, ...consoleErrors(400) }), summary: 'Set how the sandbox callee at a number behaves' },
      },
    )
    .post(
      '/calls',
      async ({ body, set }) => {
        const from = normalizePhone(body.from)
        if (!from) throw invalid('from', `"${body.from}" is not a phone number`)
        const to = normalizePhone(body.to)
        if (!to) throw invalid('to', `"${body.to}" is not a phone number`)
        const rang = await deps.sandbox.ring({ from, to, lines: body.lines, hangupAfterMs: body.hangupAfterMs })
        set.status = 201
        return rang
      },
      {
        body: t.Object(
          {
            from: t.String({ minLength: 1, maxLength: 40 }),
            to: t.String({ minLength: 1, maxLength: 40, description: 'one of our numbers' }),
            lines: t.Optional(t.Array(t.String({ maxLength: 500 }), { maxItems: 50 })),
            hangupAfterMs: t.Optional(t.Union([BodyInt({ minimum: 0, maximum: MAX_HANGUP_MS }), t.Null()])),
          },
          { additionalProperties: false },
        ),
        detail: {
          responses: answers({
            201: t.Object({ callRef: t.String(), answered: t.Boolean({ description: 'false: no agent takes calls at that number, every line is busy, or this instance is at capacity (busy)' }) }),
            ...consoleErrors(400),
          }),
          summary: 'The sandbox network rings one of our numbers (an inbound call)',
        },
      },
    )
}
