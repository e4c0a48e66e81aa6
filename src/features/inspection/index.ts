/** Watching live actors from the console: machine definitions and one actor's state. */
import { defineFeature } from '../feature'
import { inspectionConsole } from './console'

export const inspectionFeature = defineFeature({
  name: 'inspection',
  build: (kernel) => ({ services: {}, console: [inspectionConsole({ auth: kernel.http.console, runtime: kernel.runtime })] }),
})
