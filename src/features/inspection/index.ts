/** Watching live actors from the console: machine definitions and one actor's state. */
import { defineFeature } from '../../kernel/feature'
import { inspectionRef } from './public'
import { inspectionConsole } from './console'
import { callsRef } from '../calls/public'

export const inspectionFeature = defineFeature(inspectionRef, {
  build: (kernel, use) => {
    const { media } = use(callsRef)
    return { services: {}, console: [inspectionConsole({ auth: kernel.http.console, runtime: kernel.runtime, pipeline: (id) => media.pipeline(id) })] }
  },
})
