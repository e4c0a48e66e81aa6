import { describe, expect, test } from 'bun:test'
import { ANYTHING_ELSE, decide, ESCALATED, LEAD_NOTED, LocalLanguageModel, NO_ANSWER } from '../../../src/providers/llm/local'
import { answerFromFacts, BUSINESS_INSTRUCTIONS_HEADING, businessFacts, STEPS_HEADING } from '../../../src/providers/llm/local-facts'
import { asksForPerson, bestSentences, DEFAULT_GREETING, findName, findPhone } from '../../../src/providers/llm/local-text'
import { type ChatMessage, complete, type ToolSpec } from '../../../src/providers/llm/port'
import { collect, failure } from './helpers'

const tool = (name: string): ToolSpec => ({ name, description: name, parameters: { type: 'object', properties: {} } })
const ALL = [tool('search_knowledge'), tool('escalate'), tool('capture_lead')]
const SYSTEM: ChatMessage = { role: 'system', content: 'You are Asha, the assistant of Sunrise Dental.\nGreeting: "Hi, I\'m Asha from Sunrise Dental. How can I help?"\nBe brief.' }
const m = new LocalLanguageModel()
const user = (content: string): ChatMessage => ({ role: 'user', content })

/** The history after the model called search_knowledge for `question` and got `result`. */
function afterSearch(question: string, result: unknown): ChatMessage[] {
  return [
    SYSTEM,
    user(question),
    { role: 'assistant', content: '', toolCalls: [{ id: 'call_local_2', name: 'search_knowledge', arguments: { query: question } }] },
    { role: 'tool', toolCallId: 'call_local_2', content: typeof result === 'string' ? result : JSON.stringify(result) },
  ]
}

describe('local model policy', () => {
  test('greets with the greeting from the system prompt before the customer writes', async () => {
    expect(await complete(m, { messages: [SYSTEM], tools: ALL })).toMatchObject({ text: "Hi, I'm Asha from Sunrise Dental. How can I help?", toolCalls: [], finishReason: 'stop' })
    expect((await complete(m, { messages: [{ role: 'system', content: 'No greeting here.' }] })).text).toBe(DEFAULT_GREETING)
  })

  test('a question with search_knowledge offered → search with the user text', async () => {
    const r = await complete(m, { messages: [SYSTEM, user('What are your opening hours?')], tools: ALL })
    expect(r).toMatchObject({ text: '', finishReason: 'tool_calls', toolCalls: [{ id: 'call_local_2', name: 'search_knowledge', arguments: { query: 'What are your opening hours?' } }] })
    expect(r.usage!.inputTokens).toBeGreaterThan(0)
  })

  test('asking for a person with escalate offered → escalate', async () => {
    for (const text of ['Can I talk to a real person?', 'I want a human', 'connect me with someone please', 'Manager!', 'agent please']) {
      const r = await complete(m, { messages: [SYSTEM, user(text)], tools: ALL })
      expect(r.toolCalls).toEqual([{ id: 'call_local_2', name: 'escalate', arguments: { reason: text } }])
    }
  })

  test('not a person request: questions that merely mention one', () => {
    expect(asksForPerson('Are you an AI agent?')).toBe(false)
    expect(asksForPerson('Who is the manager of the clinic?')).toBe(false)
    expect(asksForPerson('Please transfer me to a human')).toBe(true)
  })

  test('contact details with capture_lead offered → capture_lead with what was found', async () => {
    const r = await complete(m, { messages: [SYSTEM, user('Hi, my name is Priya Sharma, email priya.s@example.co.in or call +91 98765 43210')], tools: ALL })
    expect(r.toolCalls).toEqual([{ id: 'call_local_2', name: 'capture_lead', arguments: { name: 'Priya Sharma', email: 'priya.s@example.co.in', phone: '+919876543210' } }])
    const p = await complete(m, { messages: [SYSTEM, user("I'm interested, reach me at (415) 555-0132")], tools: ALL })
    expect(p.toolCalls[0].arguments).toEqual({ phone: '4155550132' })
  })

  test('a person request outranks contact details; capture needs the tool offered', async () => {
    const r = await complete(m, { messages: [SYSTEM, user('Let me speak to a manager, my email is a@b.com')], tools: ALL })
    expect(r.toolCalls[0].name).toBe('escalate')
    const s = await complete(m, { messages: [SYSTEM, user('my email is a@b.com')], tools: [tool('search_knowledge')] })
    expect(s.toolCalls[0]).toMatchObject({ name: 'search_knowledge', arguments: { query: 'my email is a@b.com' } })
  })

  test('a search result → the most relevant sentences of the best passage, citing its title', async () => {
    const passages = [
      { text: 'We are a family clinic. Parking is free.', score: 0.2, documentId: 'doc_1', title: 'About us' },
      {
        text: 'Our clinic was founded in 1998. We are open Monday to Saturday, 9am to 7pm. On Sundays we are closed. Payment by card is accepted.',
        score: 0.83,
        documentId: 'doc_2',
        title: 'Opening hours',
      },
    ]
    const r = await complete(m, { messages: afterSearch('When are you open on Sundays?', { passages }), tools: ALL })
    expect(r.toolCalls).toEqual([])
    expect(r.text).toBe('We are open Monday to Saturday, 9am to 7pm. On Sundays we are closed. (Source: Opening hours)')
  })

  test('nothing found (or an unreadable result) → says so plainly and offers a person', async () => {
    expect((await complete(m, { messages: afterSearch('Do you do braces?', { passages: [] }), tools: ALL })).text).toBe(NO_ANSWER)
    expect((await complete(m, { messages: afterSearch('Do you do braces?', 'not json'), tools: ALL })).text).toBe(NO_ANSWER)
    expect(NO_ANSWER).toMatch(/don't have an answer/)
    expect(NO_ANSWER).toMatch(/person/)
  })

  test('results of escalate / capture_lead / other tools get a plain reply, never another tool call', async () => {
    const after = (name: string, content: string): ChatMessage[] => [
      SYSTEM,
      user('x'),
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name, arguments: {} }] },
      { role: 'tool', toolCallId: 'c1', content },
    ]
    expect((await complete(m, { messages: after('escalate', '{"ok":true}'), tools: ALL })).text).toBe(ESCALATED)
    expect((await complete(m, { messages: after('capture_lead', '{"ok":true}'), tools: ALL })).text).toBe(LEAD_NOTED)
    expect((await complete(m, { messages: after('book_callback', 'Callback booked for 5pm.'), tools: ALL })).text).toBe('Callback booked for 5pm.')
    // the tool's name may come on the tool message itself
    const named: ChatMessage[] = [SYSTEM, user('x'), { role: 'tool', toolCallId: 'zz', name: 'escalate', content: '{}' }]
    expect((await complete(m, { messages: named, tools: ALL })).text).toBe(ESCALATED)
  })

  test('no tools offered: greeting for a hello, the no-answer line otherwise; after its own turn it asks', async () => {
    expect((await complete(m, { messages: [SYSTEM, user('hello!')] })).text).toBe("Hi, I'm Asha from Sunrise Dental. How can I help?")
    expect((await complete(m, { messages: [SYSTEM, user('What is the price of a filling?')] })).text).toBe(NO_ANSWER)
    expect((await complete(m, { messages: [SYSTEM, user('ok'), { role: 'assistant', content: 'Sure.' }] })).text).toBe(ANYTHING_ELSE)
  })

  test('maxTokens is respected at about 4 characters a token', async () => {
    const r = await complete(m, { messages: [SYSTEM, user('What is the price of a filling?')], maxTokens: 5 })
    expect(r.finishReason).toBe('length')
    expect(r.text.length).toBeLessThanOrEqual(20)
    expect(NO_ANSWER.startsWith(r.text)).toBe(true)
  })

  test('streams several text pieces, deterministic across runs', async () => {
    const req = { messages: afterSearch('hours?', { passages: [{ text: 'Open 9 to 5. Closed Sunday.', score: 1, documentId: 'd', title: 'Hours' }] }) }
    const a = await collect(m, req)
    expect(a.filter((e) => e.type === 'text').length).toBeGreaterThan(1)
    expect(await collect(m, req)).toEqual(a)
  })

  test('honours an aborted signal', async () => {
    expect((await failure(m, { messages: [SYSTEM], signal: AbortSignal.abort() })).kind).toBe('aborted')
  })

  test('text helpers', () => {
    expect(findPhone('on 2024-10-21 at 10')).toBeUndefined()
    expect(findPhone('order 12345')).toBeUndefined()
    expect(findName("I'm Looking for help")).toBeUndefined()
    expect(findName('this is Ravi')).toBe('Ravi')
    expect(bestSentences('Alpha beta. Gamma delta.', 'nothing matches')).toBe('Alpha beta.')
  })

  test('a passage heading is context, never repeated in the answer', () => {
    expect(bestSentences('Refunds\nRefunds are paid within 14 days. Gift cards are final.', 'when are refunds paid')).toBe('Refunds are paid within 14 days.')
    expect(bestSentences('How do refunds work?\nWe refund to your card.', 'how do refunds work')).toBe('We refund to your card.')
    expect(bestSentences('Open 9 to 5.\nClosed Sunday.', 'closed sunday')).toBe('Closed Sunday.')
  })

  test('business facts: the instructions and steps sections and the Business line, nothing else', () => {
    const system = [
      'You are Asha.\nGreeting: Hi!\nBusiness: A dental clinic in Pune',
      'Manner:\nNever invent prices, policies or promises.',
      `${BUSINESS_INSTRUCTIONS_HEADING}\nParking\nThere is free parking behind the clinic.\nWe accept all major cards.`,
      `${STEPS_HEADING}\n1. Greet\n2. Bookings — Ask which day suits them — morning or evening.`,
      'Rules:\n- Keep replies short.',
    ].join('\n\n')
    expect(businessFacts(system)).toEqual([
      { context: '', text: 'A dental clinic in Pune' },
      { context: 'Parking', text: 'There is free parking behind the clinic.' },
      { context: '', text: 'We accept all major cards.' },
      { context: '', text: 'Greet' },
      { context: 'Bookings', text: 'Ask which day suits them — morning or evening.' },
    ])
    expect(answerFromFacts(businessFacts(system), 'Is there parking?')).toEqual({ text: 'There is free parking behind the clinic.', share: 1 })
    expect(answerFromFacts(businessFacts(system), 'What are your prices?')).toBeNull()
    // Half the words is not enough: "parking fees" is not answered by "free parking".
    expect(answerFromFacts(businessFacts(system), 'What are the parking fees?')).toBeNull()
  })

  test('no search tool: a question the instructions answer gets that line', async () => {
    const system: ChatMessage = { role: 'system', content: `Greeting: Hi\n\n${BUSINESS_INSTRUCTIONS_HEADING}\nOur office hours are 9am to 5pm Monday to Friday.` }
    expect((await complete(m, { messages: [system, user('What are your office hours?')] })).text).toBe('Our office hours are 9am to 5pm Monday to Friday.')
  })
})

describe('local model: transfer_call', () => {
  const transfer: ToolSpec = {
    name: 'transfer_call',
    description: 'Put the caller through. Destinations, and when to use each: "Front desk": general questions; "Billing": bills, refunds and payments.',
    parameters: { type: 'object', properties: { destination: { type: 'string', enum: ['Front desk', 'Billing'] } }, required: ['destination'] },
  }
  const escalate: ToolSpec = { name: 'escalate', description: 'Hand to a person.', parameters: { type: 'object', properties: {} } }
  const ask = (messages: ChatMessage[], tools: ToolSpec[]) => decide(messages, tools)

  test('a request for a person calls it with the destination that matches best, outranking escalate', () => {
    expect(ask([{ role: 'user', content: 'Can I talk to a person about a refund?' }], [escalate, transfer])).toEqual({ kind: 'tool', name: 'transfer_call', arguments: { destination: 'Billing' } })
    expect(ask([{ role: 'user', content: 'I need a person.' }], [transfer])).toEqual({ kind: 'tool', name: 'transfer_call', arguments: { destination: 'Front desk' } })
  })
  test('a yes to its own offer of a person calls it; without the tool it escalates as before', () => {
    const offered: ChatMessage[] = [
      { role: 'user', content: 'What is the meaning of life?' },
      { role: 'assistant', content: NO_ANSWER },
      { role: 'user', content: 'Yes please.' },
    ]
    expect(ask(offered, [transfer])).toMatchObject({ kind: 'tool', name: 'transfer_call' })
    expect(ask([{ role: 'user', content: 'Can I talk to a person?' }], [escalate])).toMatchObject({ kind: 'tool', name: 'escalate' })
  })
  test('its result is said: connecting, or why not', () => {
    const call = { id: 'c1', name: 'transfer_call', arguments: { destination: 'Billing' } }
    const turns = (content: string): ChatMessage[] => [
      { role: 'user', content: 'A person please' },
      { role: 'assistant', content: '', toolCalls: [call] },
      { role: 'tool', content, toolCallId: 'c1', name: 'transfer_call' },
    ]
    expect(ask(turns(JSON.stringify({ transferring: true, to: 'Billing' })), [transfer])).toEqual({ kind: 'text', text: "Of course. I'm connecting you with Billing now, please hold." })
    expect(ask(turns(JSON.stringify({ transferring: false, error: 'choose one of: Billing' })), [transfer])).toEqual({
      kind: 'text',
      text: "I'm sorry, I can't put you through right now: choose one of: Billing.",
    })
  })
})
