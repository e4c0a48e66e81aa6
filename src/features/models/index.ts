/** The models list (docs/spec.md Lists): what an agent's `model` takes, and which the plan includes. */

import { defineFeature } from '../../kernel/feature'
import { byokRef } from '../byok/public'
import { modelsRef } from './public'
import { modelsV1 } from './v1'

export const modelsFeature = defineFeature(modelsRef, {
  build: (kernel, use) => ({ services: {}, v1: [modelsV1({ context: kernel.http.v1, byok: use(byokRef).byok })] }),
})
