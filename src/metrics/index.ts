/** Prometheus metrics: the named metrics, what the kernel reports, the route. */
export { Metrics, Sampled, type Sample } from './metrics'
export { watchKernel } from './kernel'
export { metricsRoute } from './route'
