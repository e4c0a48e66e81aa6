/** What other features may use of simulations: its ref; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { SimulationService } from './service'

export interface SimulationsServices {
  simulations: SimulationService
}

export const simulationsRef = featureRef<SimulationsServices>('simulations')
export { Run, RunBody, RunOutline, Scenario, Suite } from './model'
export { presentRun, presentRunOutline, presentScenario, presentSuite } from './present'
