/** What other features may use of BYOK: its ref (for `use`) and types; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { ByokRuntime } from './runtime'
import type { ByokService } from './service'

export interface ByokServices {
  byok: ByokService
  /** What calls and replies run on while a workspace's own keys are switched on. */
  runtime: ByokRuntime
}

export const byokRef = featureRef<ByokServices>('byok')

export type { ByokRealtime, ByokRuntime, ByokSpeech } from './runtime'
export type { ByokService } from './service'
