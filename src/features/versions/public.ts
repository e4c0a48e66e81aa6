/** What other features may use of versions: its ref (for `use`) and types; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { VersionsFeature } from './wiring'

export const versionsRef = featureRef<VersionsFeature>('versions')

export { presentVersion } from './model'
export type { VersionDoc } from './repository'
export type { VersionService } from './service'
export { notPublished, type ServedAgent, type ServingAgents } from './serving'
export { changedPanels, PANELS, type Panel } from './snapshot'
