import { describe, expect, test } from 'bun:test'
import { type AnalysisRequest, analyseCall, type TranscriptLine, trimSummary } from '../../../../src/features/calls/analysis/analysis'
import { type FieldSpec, fieldValue, typedFields } from '../../../../src/features/calls/analysis/field-values'
import { purposeOf } from '../../../../src/features/calls/analysis/local-summary'
import { type LanguageModel, type LlmEvent, LocalLanguageModel, type StreamRequest } from '../../../../src/providers/llm'

const at = '2026-11-24T10:00:00.000Z'
const line = (speaker: TranscriptLine['speaker'], text: string): TranscriptLine => ({ speaker, text, at })
const field = (name: string, type: FieldSpec['type'] = 'text', extra: Partial<FieldSpec> = {}): FieldSpec => ({ name, type, description: null, choices: null, ...extra })

/** A scripted model that records what it was asked. */
function scripted(answer: (req: StreamRequest) => LlmEvent[]): LanguageModel & { requests: StreamRequest[] } {
  const requests: StreamRequest[] = []
  return {
    id: 'fake',
    provider: 'openai',
    requests,
    async *stream(req) {
      requests.push(req)
      for (const ev of answer(req)) yield ev
    },
  }
}

const base = (over: Partial<AnalysisRequest> = {}): AnalysisRequest => ({
  transcript: [
    line('agent', 'Hi, this is Ava from Sunrise Dental calling about your cleaning appointment.'),
    line('customer', 'Oh right. Can we move it to next week?'),
    line('agent', 'Of course. How many people will come?'),
    line('customer', 'Two of us, me and my son.'),
  ],
  direction: 'outbound',
  agentName: 'Ava',
  purpose: 'confirm the cleaning appointment',
  summarise: true,
  fields: [],
  ...over,
})

describe('field values', () => {
  test('typed as asked, placeholders and wrong types left out', () => {
    expect(fieldValue(field('n', 'number'), 3)).toBe(3)
    expect(fieldValue(field('n', 'number'), '1,200')).toBe(1200)
    expect(fieldValue(field('n', 'number'), 'five-ish')).toBeUndefined()
    expect(fieldValue(field('n', 'number'), Number.NaN)).toBeUndefined()
    expect(fieldValue(field('t'), 'Unknown')).toBeUndefined()
    expect(fieldValue(field('t'), 'N/A.')).toBeUndefined()
    expect(fieldValue(field('t'), '  Priya ')).toBe('Priya')
    expect(fieldValue(field('b', 'boolean'), 'Yes')).toBe(true)
    expect(fieldValue(field('b', 'boolean'), 'maybe')).toBeUndefined()
    expect(fieldValue(field('d', 'date'), '2026-02-30')).toBeUndefined()
    expect(fieldValue(field('d', 'date'), '2026-02-28')).toBe('2026-02-28')
    expect(fieldValue(field('c', 'text', { choices: ['Morning', 'Evening'] }), 'evening')).toBe('Evening')
    expect(fieldValue(field('c', 'text', { choices: ['Morning', 'Evening'] }), 'night')).toBeUndefined()
    expect(fieldValue(field('t'), null)).toBeUndefined()
  })

  test('only the requested names, absent when unanswered', () => {
    const specs = [field('party', 'number'), field('name'), field('email')]
    expect(typedFields(specs, { party: '2', name: 'unknown', other: 'x' })).toEqual({ party: 2 })
  })
})

describe('analysis with a vendor model', () => {
  test('one summary pass and one fields pass, typed and trimmed', async () => {
    const model = scripted((req) =>
      req.tools?.length
        ? [
            { type: 'tool_call', id: 'c1', name: 'record_fields', arguments: { partySize: 2, newDate: 'next week', email: 'not provided' } },
            { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 120, outputTokens: 20 } },
          ]
        : [
            { type: 'text', text: 'Ava called to confirm a cleaning. The customer asked to move it. ' },
            { type: 'text', text: 'Two people will come. Extra sentence that goes too far.' },
            { type: 'done', finishReason: 'stop', usage: { inputTokens: 100, outputTokens: 30 } },
          ],
    )
    const fields = [field('partySize', 'number'), field('newDate'), field('email')]
    const result = await analyseCall(model, base({ fields }))
    expect(result.summary).toBe('Ava called to confirm a cleaning. The customer asked to move it. Two people will come.')
    expect(result.fields).toEqual({ partySize: 2, newDate: 'next week' })
    expect(result.passes.map((p) => p.kind)).toEqual(['summary', 'fields'])
    expect(model.requests).toHaveLength(2)
    const tool = model.requests[1].tools![0]
    expect(tool.parameters).toMatchObject({ properties: { partySize: { type: 'number' }, newDate: { type: 'string' } } })
    expect(model.requests[0].messages[1].content).toContain('Customer: Two of us, me and my son.')
  })

  test('no pass runs when nobody spoke, summaries are off or nothing is asked', async () => {
    const model = scripted(() => [{ type: 'done', finishReason: 'stop' }])
    expect(await analyseCall(model, base({ transcript: [], fields: [field('x')] }))).toEqual({ summary: null, fields: {}, passes: [] })
    expect(await analyseCall(model, base({ summarise: false }))).toEqual({ summary: null, fields: {}, passes: [] })
    expect(model.requests).toHaveLength(0)
  })

  test('fields are not asked when the customer never spoke', async () => {
    const model = scripted(() => [
      { type: 'text', text: 'The agent spoke; nobody answered.' },
      { type: 'done', finishReason: 'stop' },
    ])
    const result = await analyseCall(model, base({ transcript: [line('agent', 'Hello?')], fields: [field('x')] }))
    expect(result.fields).toEqual({})
    expect(result.passes.map((p) => p.kind)).toEqual(['summary'])
  })

  test('a model that answers without the tool records no fields', async () => {
    const model = scripted(() => [
      { type: 'text', text: 'partySize is 2' },
      { type: 'done', finishReason: 'stop' },
    ])
    const result = await analyseCall(model, base({ summarise: false, fields: [field('partySize', 'number')] }))
    expect(result.fields).toEqual({})
  })
})

describe('analysis with the local model (offline, honest)', () => {
  const local = new LocalLanguageModel()

  test('summary: the purpose without its greeting, what the customer asked and the reply, how the call ended', async () => {
    const { summary } = await analyseCall(local, base({ purpose: 'Hi, this is Ava from Sunrise Dental calling about your cleaning appointment.' }))
    expect(summary).toBe(
      'Ava called the customer about their cleaning appointment. The customer asked "Oh right. Can we move it to next week?" and Ava replied "Of course. How many people will come?" The call ended with the customer saying "Two of us, me and my son."',
    )
  })

  test("the README's walkthrough: a purpose that is only a greeting is not quoted; the question and its answer are the outcome", async () => {
    const purpose = 'Hello Sam, this is Ava from Bright Smile.'
    const transcript = [line('agent', purpose), line('customer', 'When are you open?'), line('agent', 'We are open from 9am to 5pm, Monday to Friday.')]
    const { summary } = await analyseCall(local, base({ purpose, transcript }))
    expect(summary).toBe('Ava called the customer. The customer asked "When are you open?" and Ava replied "We are open from 9am to 5pm, Monday to Friday." The call ended after that.')
  })

  test('summary: a question left unanswered, an inbound call, a knowledge answer without its citation', async () => {
    const asked = await analyseCall(local, base({ transcript: [line('agent', 'Hello?'), line('customer', 'Hi. Is the clinic open on Saturday?')] }))
    expect(asked.summary).toBe('Ava called the customer to say "confirm the cleaning appointment". The customer asked "Hi. Is the clinic open on Saturday?" The call ended before Ava replied.')
    const inbound = await analyseCall(
      local,
      base({
        direction: 'inbound',
        purpose: null,
        transcript: [line('agent', 'Bright Smile, Ava speaking.'), line('customer', 'Hello'), line('customer', 'I need a cleaning'), line('agent', 'We clean teeth on Tuesdays. (Source: Services)')],
      }),
    )
    expect(inbound.summary).toBe('The customer called Ava. The customer said "I need a cleaning" and Ava replied "We clean teeth on Tuesdays." The call ended after that.')
  })

  test.each([
    ['Hello Sam, this is Ava from Bright Smile.', ''],
    ['Hello there.', ''],
    ['Hi, this is Bean There calling about your order.', 'about your order.'],
    ['Hello, this is the front desk returning your call.', 'returning your call.'],
    ["Hi Sam, it's Ava from Bright Smile. We'd like to confirm your appointment tomorrow.", 'to confirm your appointment tomorrow.'],
    ["I'm calling to remind you about your visit.", 'to remind you about your visit.'],
    ['This is a reminder about your appointment.', 'This is a reminder about your appointment.'],
    ['Your order is ready.', 'Your order is ready.'],
  ])('the purpose of %p is %p', (spoken, purpose) => {
    expect(purposeOf(spoken)).toBe(purpose)
  })

  test('fields only where the customer stated them', async () => {
    const transcript = [
      line('agent', 'Hello, may I have your name please?'),
      line('customer', "Sure, it's Priya Raman."),
      line('agent', 'How many people will come?'),
      line('customer', 'Three of us.'),
      line('agent', 'Do you need parking?'),
      line('customer', 'No, we will walk.'),
      line('agent', 'Morning or evening slot?'),
      line('customer', 'Evening works best. My email is priya@example.com'),
    ]
    const fields = [
      field('name'),
      field('partySize', 'number', { description: 'how many people will come' }),
      field('needsParking', 'boolean', { description: 'parking needed' }),
      field('slot', 'text', { choices: ['Morning', 'Evening'] }),
      field('email'),
      field('budget', 'number', { description: 'budget in dollars' }),
      field('company'),
    ]
    const result = await analyseCall(local, base({ transcript, summarise: false, fields }))
    expect(result.fields).toEqual({ name: 'Priya Raman', partySize: 3, needsParking: false, slot: 'Evening', email: 'priya@example.com' })
    expect(result.passes).toEqual([])
  })

  test('a later answer wins over an earlier one; "my X is Y" is read', async () => {
    const transcript = [
      line('agent', 'What day suits you?'),
      line('customer', 'Monday. Actually no, my preferred day is Tuesday.'),
      line('agent', 'How many guests?'),
      line('customer', 'Four.'),
      line('agent', 'Sorry, how many guests?'),
      line('customer', 'Five, sorry.'),
    ]
    const result = await analyseCall(local, base({ transcript, summarise: false, fields: [field('preferredDay'), field('guests', 'number')] }))
    expect(result.fields).toEqual({ preferredDay: 'Tuesday', guests: 5 })
  })

  test('keys the customer pressed fill fields as the digits they typed', async () => {
    const transcript = [
      line('agent', 'Please key in your account number, then the hash key.'),
      line('customer', '[keypad] 40521#'),
      line('agent', 'And how many tickets?'),
      line('customer', 'I want [keypad] 3#'),
      line('agent', 'Press 1 to confirm, 2 to start over.'),
      line('customer', '[keypad] 1'),
    ]
    const fields = [field('accountNumber', 'text', { description: 'the account number' }), field('tickets', 'number'), field('confirmed', 'text', { choices: ['1', '2'] })]
    const result = await analyseCall(local, base({ transcript, summarise: false, fields }))
    expect(result.fields).toEqual({ accountNumber: '40521', tickets: 3, confirmed: '1' })
  })

  test('keys typed without a question about them fill the one field that takes typed digits', async () => {
    const transcript = [
      line('agent', 'Hello from Bean There! How can I help?'),
      line('customer', '[keypad] 40521#'),
      line('agent', 'Thanks. What is your name, please?'),
      line('customer', 'Priya'),
      line('agent', 'Press 1 for the shop, 2 for deliveries.'),
      line('customer', '[keypad] 2'),
    ]
    const account = field('account', 'number', { description: 'the customer’s account' })
    const fields = [account, field('name'), field('desk', 'text', { choices: ['1', '2'] })]
    const read = async (f: FieldSpec[], t = transcript) => (await analyseCall(local, base({ transcript: t, summarise: false, fields: f }))).fields
    expect(await read(fields)).toEqual({ account: 40521, name: 'Priya', desk: '2' })
    expect(await read([field('reference', 'text', { description: 'the booking code' }), field('name')])).toEqual({ reference: '40521', name: 'Priya' })
    // Two fields could take the keys: neither is guessed.
    expect(await read([account, field('guests', 'number')])).toEqual({})
    // Keys typed after a question about another field answered that one, not the typed field.
    const afterName = [line('agent', 'What is your name?'), line('customer', '[keypad] 77#')]
    expect((await read([account, field('name')], afterName)).account).toBeUndefined()
  })
})

test('trimSummary keeps at most three sentences', () => {
  expect(trimSummary('One. Two! Three? Four.')).toBe('One. Two! Three?')
  expect(trimSummary('  ')).toBeNull()
  expect(trimSummary('No final stop')).toBe('No final stop')
})
