/** What other features may use of analytics: its ref; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { AnalyticsService } from './service'

export interface AnalyticsServices {
  analytics: AnalyticsService
}

export const analyticsRef = featureRef<AnalyticsServices>('analytics')
