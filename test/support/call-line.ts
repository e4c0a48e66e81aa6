/**
 * A call's line with nothing behind it (media/call-line.ts): the agent answers with nothing and
 * every effect is a no-op, for tests and benches that drive a pipeline or session by themselves.
 * `overrides` give it what the caller measures or asserts on.
 */
import type { CallLine } from '../../src/voice/call-line'

export function inertLine(overrides: Partial<CallLine> = {}): CallLine {
  return {
    callId: 'c1',
    opening: '',
    voice: 'aria',
    language: 'en',
    maxCallSeconds: 600,
    respond: async () => ({ reply: '', endCall: false, messageId: null }),
    agentSaid: async () => {},
    customerSaid: async () => {},
    latency: () => {},
    state: () => {},
    hangUp: async () => {},
    log: () => {},
    ...overrides,
  }
}
