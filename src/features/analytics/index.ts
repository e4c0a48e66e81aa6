/** Agent analytics (docs/spec.md "Analytics answer"), by store aggregation. */

import { defineFeature } from '../../kernel/feature'
import { agentsRef } from '../agents/public'
import { analyticsRef } from './public'
import { AnalyticsService } from './service'
import { analyticsV1 } from './v1'

export const analyticsFeature = defineFeature(analyticsRef, {
  async build(kernel, use) {
    const { agents } = use(agentsRef)
    const analytics = await AnalyticsService.open(kernel.store, kernel.bus.events, kernel.clock)
    return { services: { analytics }, v1: [analyticsV1({ context: kernel.http.v1, agents, analytics })] }
  },
})
