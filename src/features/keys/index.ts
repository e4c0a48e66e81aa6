/** What other features may use of keys (its only public surface). */

// Re-exported for other features (they import from this index, never from inner files).
export { apiKeysSpec, openApiKeys } from './repository'
export { KeyService, type Principal } from './service'
