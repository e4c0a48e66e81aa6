/** What other features may use of outbox (its only public surface). */

// Re-exported for other features (they import from this index, never from inner files).
export { outboxConsole } from './console'
