/** Console: contacts with consent flags (docs/design.md console table). */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { type ContactService, presentContact } from './service'

const Contact = t.Object({
  id: t.String(),
  phone: t.String(),
  name: t.Union([t.String(), t.Null()]),
  email: t.Union([t.String(), t.Null()]),
  optedOut: t.Boolean(),
  doNotCall: t.Boolean(),
})

export function contactsConsole(deps: { auth: KernelHttp['console']; contacts: ContactService }) {
  return new Elysia({ prefix: '/workspaces/:ws/contacts', detail: { tags: ['Console'] } })
    .use(deps.auth)
    .post(
      '',
      async ({ body, set, workspace }) => {
        set.status = 201
        return presentContact(await deps.contacts.create(workspace.id, body))
      },
      {
        params: t.Object({ ws: t.String() }),
        workspace: true,
        body: t.Object(
          {
            phone: t.String({ minLength: 1, maxLength: 40 }),
            name: t.Optional(t.Union([t.String({ maxLength: 120 }), t.Null()])),
            email: t.Optional(t.Union([t.String({ format: 'email', maxLength: 254 }), t.Null()])),
            optedOut: t.Optional(t.Boolean()),
          },
          { additionalProperties: false },
        ),
        detail: { responses: answers({ 201: Contact, ...consoleErrors(400, 404, 409) }), summary: 'Import a contact' },
      },
    )
    .patch('/:id', async ({ params, body, workspace }) => presentContact(await deps.contacts.patch(workspace.id, params.id, body)), {
      params: t.Object({ ws: t.String(), id: t.String() }),
      workspace: true,
      body: t.Object({ optedOut: t.Optional(t.Boolean()), doNotCall: t.Optional(t.Boolean()) }, { additionalProperties: false }),
      detail: { responses: answers({ 200: Contact, ...consoleErrors(400, 404) }), summary: 'Change a contact’s consent' },
    })
}
