/** Watching live actors from the console: machine definitions and one actor's state. */
import { defineFeature } from '../../kernel/feature'
import { callsRef } from '../calls/public'
import { inspectionConsole } from './console'
import { inspectionRef } from './public'

export const inspectionFeature = defineFeature(inspectionRef, {
  build: (kernel, use) => {
    const { media } = use(callsRef)
    return { services: {}, console: [inspectionConsole({ auth: kernel.http.console, runtime: kernel.runtime, pipeline: (id) => media.pipeline(id) })] }
  },
})
