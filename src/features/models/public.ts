/** What other features may use of the models list: its ref; never its build (index.ts). The catalogue itself is src/catalog/models.ts. */
import { featureRef } from '../../kernel/feature'

export const modelsRef = featureRef<Record<string, never>>('models')
