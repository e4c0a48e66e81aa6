/** The models list (SPEC.md Lists): what an agent's `model` takes, and which the plan includes. */
import { byokFeature } from '../byok'
import { defineFeature } from '../../kernel/feature'
import { modelsV1 } from './v1'

export const modelsFeature = defineFeature({
  name: 'models',
  build: (kernel, use) => ({ services: {}, v1: [modelsV1({ context: kernel.http.v1, byok: use(byokFeature).byok })] }),
})
