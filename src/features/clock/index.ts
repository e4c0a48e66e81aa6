/** The service clock on the console: read it, and advance it under SERVICE_CLOCK=manual. */
import { defineFeature } from '../../kernel/feature'
import { type ClockControl, clockConsole } from './console'
import { clockRef } from './public'

export const clockFeature = defineFeature(clockRef, {
  build(kernel) {
    // Under the manual clock, an advance answers only after every timer due by then has fired and
    // the effects those timers started (the 30-day erasure, a delivery retry) have run.
    const control: ClockControl = {
      clock: kernel.clock,
      async afterAdvance(now) {
        await kernel.persistClock(now)
        await kernel.clockHooks.advanced(now)
      },
    }
    return { services: { control }, console: [clockConsole({ auth: kernel.http.console, control })] }
  },
})
