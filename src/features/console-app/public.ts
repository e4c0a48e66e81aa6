/** What other features may use of the console app: its ref; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { LiveHub } from './live'

export interface ConsoleAppServices {
  /** The live streams open in this process (their count is what a health page would show). */
  hub: LiveHub
}

export const consoleAppRef = featureRef<ConsoleAppServices>('console-app')
