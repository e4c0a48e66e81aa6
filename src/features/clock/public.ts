/** What other features may use of the clock console: its ref; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { ClockControl } from './console'

export interface ClockServices {
  control: ClockControl
}

export const clockRef = featureRef<ClockServices>('clock')
