/**
 * A failed model call as an API answer. The provider is not the caller's fault, so never a 4xx:
 * 503 (with Retry-After when the vendor gave one) for what passes with time, 502 for a vendor that
 * refused or broke. LlmError messages are already plain words without keys (providers/llm/errors.ts).
 */
import { isLlmError } from '../../providers/llm'
import { unavailable, upstreamFailed } from '../../refusals'

export function llmFailure(err: unknown): unknown {
  if (!isLlmError(err)) return err
  if (err.retryable) {
    const seconds = err.retryAfterMs !== undefined ? Math.max(1, Math.ceil(err.retryAfterMs / 1000)) : undefined
    return unavailable(`the agent's model is unavailable right now: ${err.message}`, seconds, { provider: err.provider })
  }
  return upstreamFailed(`the agent's model provider refused: ${err.message}`, { provider: err.provider })
}
