/** The voices list (docs/spec.md Lists): what an agent's `voice.voice` takes. */
import { defineFeature } from '../../kernel/feature'
import { voicesRef } from './public'
import { voicesV1 } from './v1'

export const voicesFeature = defineFeature(voicesRef, {
  build: (kernel) => ({ services: {}, v1: [voicesV1({ context: kernel.http.v1 })] }),
})
