/**
 * Console: the emails the service kept instead of sending (no SMTP_URL set), newest first, with
 * the event each was about — docs/design.md's console table fixes the shape.
 */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import { pageQuery, pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import type { OutboxEmailDoc, OutboxRepo } from '../../providers/email'

const OutboxEmail = t.Object({
  id: t.String(),
  to: t.String(),
  subject: t.String(),
  text: t.String({ description: 'the whole body as it would have been sent; the signed event is in it' }),
  eventId: t.Union([t.String(), t.Null()]),
  createdAt: t.String(),
})

const present = (d: OutboxEmailDoc) => ({ id: d.id, to: d.to, subject: d.subject, text: d.text, eventId: d.eventId, createdAt: d.createdAt })

export function outboxConsole(deps: { auth: KernelHttp['console']; outbox: OutboxRepo }) {
  return new Elysia({ prefix: '/outbox', detail: { tags: ['Console'] } }).use(deps.auth).get('', ({ query }) => paginate((limit, after) => deps.outbox.page({}, limit, after), query, 25, present), {
    query: t.Object(pageQuery(100, 25)),
    detail: {
      responses: answers({ 200: pageSchema(OutboxEmail), ...consoleErrors(400) }),
      summary: 'Emails kept instead of sent',
      description: 'With no SMTP_URL set, every email (an email webhook delivery) is kept here instead of sent, newest first. With SMTP_URL set, emails go out through SMTP and this list stays empty.',
    },
  })
}
