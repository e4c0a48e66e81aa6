/**
 * Console: the service clock. `advance` works only under SERVICE_CLOCK=manual, and answers only
 * after every durable timer that fell due inside the advance has fired (docs/design.md).
 */
import { Elysia, t } from 'elysia'
import { type Clock, iso, ManualClock } from '../../clock'
import { BodyInt } from '../../http/body-types'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { clashes } from '../../refusals'

export interface ClockControl {
  clock: Clock
  /** Persists the manual clock and fires due timers; resolves when they have run. */
  afterAdvance(now: number): Promise<void>
}

export function clockConsole(deps: { auth: KernelHttp['console']; control: ClockControl }) {
  const Now = t.Object({ now: t.String(), kind: t.String() })
  const answer = () => ({ now: iso(deps.control.clock.now()), kind: deps.control.clock.kind })
  return new Elysia({ prefix: '/clock', detail: { tags: ['Console'] } })
    .use(deps.auth)
    .get('', answer, { detail: { responses: answers({ 200: Now, ...consoleErrors() }), summary: 'Read the service clock' } })
    .post(
      '/advance',
      async ({ body }) => {
        const clock = deps.control.clock
        if (!(clock instanceof ManualClock)) throw clashes('the clock is the system clock; start the service with SERVICE_CLOCK=manual to move it')
        await deps.control.afterAdvance(clock.advance(body.ms))
        return answer()
      },
      {
        // Up to 400 days in one step: beyond every retention the product has (30-day erasure, 75-day recordings).
        body: t.Object({ ms: BodyInt({ minimum: 0, maximum: 400 * 24 * 3600 * 1000 }) }, { additionalProperties: false }),
        detail: { responses: answers({ 200: Now, ...consoleErrors(400, 409) }), summary: 'Advance the manual clock and fire the timers that fall due' },
      },
    )
}
