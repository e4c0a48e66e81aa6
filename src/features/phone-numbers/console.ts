/** Console: rent or bring a phone number, assign it, change it, release it (docs/design.md console table). */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { ACCOUNT_MAX_FIELDS, ACCOUNT_MAX_VALUE } from './carrier-accounts'
import type { PhoneNumberDoc } from './repository'
import type { PhoneNumberService } from './service'

const Number_ = t.Object({
  id: t.String(),
  number: t.String(),
  label: t.Union([t.String(), t.Null()]),
  source: t.String(),
  channel: t.String(),
  agent: t.Union([t.String(), t.Null()]),
  carrierCredentials: t.Boolean(),
  externalAgents: t.Boolean(),
  since: t.String(),
})

const present = (d: PhoneNumberDoc) => ({
  id: d.id,
  number: d.number,
  label: d.label,
  source: d.source,
  channel: d.channel,
  agent: d.agentId,
  carrierCredentials: d.carrierCredentials,
  externalAgents: d.externalAgents,
  since: d.since,
})

/** A number's own carrier account: the carrier's field names (Telnyx: apiKey, connectionId, publicKey); sealed, never shown. */
const CarrierAccount = t.Record(t.String({ minLength: 1, maxLength: 40 }), t.String({ maxLength: ACCOUNT_MAX_VALUE }), {
  maxProperties: ACCOUNT_MAX_FIELDS,
  description: "the number's own account at the carrier, e.g. Telnyx's { apiKey, connectionId, publicKey }: its calls are placed, ended and verified with it. Write-only",
})

const Path = t.Object({ ws: t.String(), number: t.String({ description: 'the number, E.164 with or without + (encode + as %2B)' }) })

export function phoneNumbersConsole(deps: { auth: KernelHttp['console']; numbers: PhoneNumberService }) {
  return new Elysia({ prefix: '/workspaces/:ws/phone-numbers', detail: { tags: ['Console'] } })
    .use(deps.auth)
    .post(
      '',
      async ({ body, set, workspace }) => {
        const d = await deps.numbers.add(workspace.id, body)
        set.status = 201
        return present(d)
      },
      {
        params: t.Object({ ws: t.String() }),
        workspace: true,
        body: t.Object(
          {
            number: t.String({ minLength: 1, maxLength: 40 }),
            label: t.Optional(t.Union([t.String({ maxLength: 120 }), t.Null()])),
            source: t.Union([t.Literal('rented'), t.Literal('brought')]),
            channel: t.Optional(t.Union([t.Literal('voice'), t.Literal('chatapp')])),
            agent: t.Optional(t.Union([t.String(), t.Null()])),
            carrierCredentials: t.Optional(t.Boolean()),
            carrierAccount: t.Optional(CarrierAccount),
            externalAgents: t.Optional(t.Boolean()),
          },
          { additionalProperties: false },
        ),
        detail: { responses: answers({ 201: Number_, ...consoleErrors(400, 404, 409, 502) }), summary: 'Add a rented or brought number' },
      },
    )
    .patch('/:number', async ({ params, body, workspace }) => present(await deps.numbers.update(workspace.id, params.number, body)), {
      params: Path,
      workspace: true,
      body: t.Object(
        {
          agent: t.Optional(t.Union([t.String({ description: 'ag_… of this workspace' }), t.Null()], { description: 'reassigns the number; null detaches it' })),
          label: t.Optional(t.Union([t.String({ maxLength: 120 }), t.Null()])),
          externalAgents: t.Optional(t.Boolean()),
          carrierAccount: t.Optional(CarrierAccount),
        },
        { additionalProperties: false },
      ),
      detail: { responses: answers({ 200: Number_, ...consoleErrors(400, 404, 502) }), summary: "Reassign, detach, relabel a number, switch external agents, or add the number's carrier account" },
    })
    .delete(
      '/:number',
      async ({ params, set, workspace }) => {
        await deps.numbers.release(workspace.id, params.number)
        set.status = 204
        return null
      },
      {
        params: Path,
        workspace: true,
        detail: {
          responses: answers({ 204: t.Null(), ...consoleErrors(404, 409) }),
          summary: 'Release a number',
          description: 'Its rent stops (months already begun stay charged); it is no longer listed or counted, and its record is removed. 409 while a call on it is ringing or connected.',
        },
      },
    )
}
