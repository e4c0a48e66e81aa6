/** Watching live actors from the console: machine definitions and one actor's state. */
import { defineFeature } from '../../kernel/feature'
import { inspectionConsole } from './console'
import { callsFeature } from '../calls'

export const inspectionFeature = defineFeature({
  name: 'inspection',
  build: (kernel, use) => {
    const { media } = use(callsFeature)
    return { services: {}, console: [inspectionConsole({ auth: kernel.http.console, runtime: kernel.runtime, pipeline: (id) => media.pipeline(id) })] }
  },
})
