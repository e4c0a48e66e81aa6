/** What other features may use of inspection: its ref; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'

export const inspectionRef = featureRef<Record<string, never>>('inspection')
