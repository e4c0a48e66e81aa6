/**
 * bench:endurance's chat-app traffic: inbound messages through the console's sandbox `inbound`
 * route at a fixed rate whatever the answers do (an open loop), from CUSTOMERS customers of the
 * agent's number and, one message in EXTERNAL_EVERY, from EXTERNAL_CUSTOMERS of the external-agents number.
 */
const CUSTOMERS = 2_000
const EXTERNAL_CUSTOMERS = 200
/** One message in EXTERNAL_EVERY goes to the external-agents number: 5/s at 200/s, inside enterprise's 600 replies a minute. */
const EXTERNAL_EVERY = 40
/** Inbound POSTs waiting for their answer past which the generator skips (and counts) a message: bounds this process. */
const MAX_IN_FLIGHT = 2_000
/** The generator's tick: one message's share of a second at the default 200/s, so none leaves much past its due time. */
const TICK_MS = 5
const TEXTS = ['What time do you open on Sunday?', 'Where can I park?', 'Do you deliver?', 'How long do refunds take?']

/** The messages due so far, skipped, waiting for their answer, and accepted (with their conversation, and whether they went to the external-agents number). */
export interface MessageTraffic {
  due: number
  skipped: number
  inFlight: number
  accepted: { messageId: string; conversationId: string; external: boolean }[]
}

export interface MessageParts {
  /** Messages a second. */
  rate: number
  /** performance.now() at which the load stops. */
  until: number
  /** Seconds since the load started. */
  elapsed: () => number
  /** The number the customers write to, and the external-agents one. */
  numbers: { answering: string; external: string }
  /** POSTs one inbound message. */
  post: (body: { channel: 'chatapp'; from: string; to: string; text: string }) => Promise<{ status: number; body: any }>
}

export function runMessages(p: MessageParts): { messages: MessageTraffic; done: Promise<void> } {
  const messages: MessageTraffic = { due: 0, skipped: 0, inFlight: 0, accepted: [] }
  const send = async (i: number) => {
    const external = i % EXTERNAL_EVERY === EXTERNAL_EVERY - 1
    const from = `+1415${String(external ? 7_000_000 + (i % EXTERNAL_CUSTOMERS) : 6_000_000 + (i % CUSTOMERS)).padStart(7, '0')}`
    messages.inFlight++
    const r = await p.post({ channel: 'chatapp', from, to: external ? p.numbers.external : p.numbers.answering, text: TEXTS[i % 4]! })
    messages.inFlight--
    if (r.status === 201) messages.accepted.push({ messageId: r.body.messageId, conversationId: r.body.conversationId, external })
  }
  const done = (async () => {
    while (performance.now() < p.until) {
      const due = Math.floor(p.elapsed() * p.rate)
      for (; messages.due < due; messages.due++) {
        if (messages.inFlight >= MAX_IN_FLIGHT) messages.skipped++
        else void send(messages.due)
      }
      await Bun.sleep(TICK_MS)
    }
  })()
  return { messages, done }
}
