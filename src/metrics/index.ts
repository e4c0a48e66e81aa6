/** Prometheus metrics: the named metrics, what the kernel reports, the route. */

export { watchKernel } from './kernel'
export { Metrics, type Sample, Sampled } from './metrics'
export { metricsRoute } from './route'
