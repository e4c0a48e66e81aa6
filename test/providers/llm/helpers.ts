// Shared by the LLM adapter tests (not a test file itself).
import { LlmError } from '../../../src/providers/llm/errors'
import type { LanguageModel, LlmEvent, StreamRequest } from '../../../src/providers/llm/port'

export async function collect(model: LanguageModel, req: StreamRequest): Promise<LlmEvent[]> {
  const out: LlmEvent[] = []
  for await (const ev of model.stream(req)) out.push(ev)
  return out
}

/** Runs the stream to its end and returns the LlmError it threw (fails if it did not throw one). */
export async function failure(model: LanguageModel, req: StreamRequest, seen: LlmEvent[] = []): Promise<LlmError> {
  try {
    for await (const ev of model.stream(req)) seen.push(ev)
  } catch (e) {
    if (e instanceof LlmError) return e
    throw new Error(`expected an LlmError, got ${String(e)}`)
  }
  throw new Error(`expected the stream to fail; it gave ${JSON.stringify(seen)}`)
}

export const textOf = (evs: LlmEvent[]) => evs.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('')
