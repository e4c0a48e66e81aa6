/** What other features may use of the voices list: its ref; never its build (index.ts). The catalogue itself is src/catalog/voices.ts. */
import { featureRef } from '../../kernel/feature'

export const voicesRef = featureRef<Record<string, never>>('voices')
