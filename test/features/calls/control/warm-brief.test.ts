/**
 * A warm transfer's brief: written by a vendor model through the OpenAI and Anthropic fakes (their
 * real wire protocols), bounded in tokens and time, and the template when the model fails, stalls
 * past the deadline or writes nothing; built from the caller's own words and stated fields with the
 * `local` model.
 */
import { expect, test } from 'bun:test'
import { BRIEF_MAX_TOKENS, spokenSummary, writeBrief } from '../../../../src/features/calls/control/brief-writer'
import { type BriefInput, callerWords, localBrief } from '../../../../src/features/calls/control/warm-brief'
import { createLanguageModel, LocalLanguageModel } from '../../../../src/providers/llm'
import { useLlmVendorFakes } from '../../../support/llm-vendors'

const OPENAI_KEY = 'sk-brief-openai-0123456789'
const ANTHROPIC_KEY = 'sk-ant-brief-0123456789'
const vendors = useLlmVendorFakes({ openai: OPENAI_KEY, anthropic: ANTHROPIC_KEY })

const at = '2026-11-28T02:00:00.000Z'
const input: BriefInput = {
  agentName: 'Front desk',
  destination: 'Billing',
  caller: { name: 'Dana Reyes', phone: '+14155550801' },
  transcript: [
    { speaker: 'agent', text: 'Hello, this is the front desk. What is your account number?', at },
    { speaker: 'customer', text: 'Hi.', at },
    { speaker: 'customer', text: 'My account number is 4471 and I was charged twice this month.', at },
    { speaker: 'agent', text: 'I see two charges on the third. I have flagged them.', at },
    { speaker: 'customer', text: 'Can I talk to a person about a refund?', at },
  ],
  fields: [{ name: 'accountNumber', type: 'number', description: 'the account number', choices: null }],
}
const OPENING = 'Hello, this is Front desk. I have Dana Reyes on the line for Billing.'
const TEMPLATE = `${OPENING} They said: "My account number is 4471 and I was charged twice this month." And then: "Can I talk to a person about a refund?" They gave their account number: 4 4 7 1.`

test('the local model: the caller’s first words that said something, their latest, and the fields they stated', async () => {
  expect(localBrief(input)).toBe(TEMPLATE)
  expect(await writeBrief(new LocalLanguageModel(), input)).toEqual({ text: TEMPLATE, by: 'local', fallback: null })
  // No model could be resolved (a vendor with no key): the same, never silence.
  expect((await writeBrief(null, input)).text).toBe(TEMPLATE)
  // A caller who only said hello, one known by number only, keys read as digits.
  expect(localBrief({ ...input, caller: { name: null, phone: '+1 415 555 0801' }, transcript: [{ speaker: 'customer', text: 'Hello?', at }], fields: [] })).toBe(
    'Hello, this is Front desk. I have a caller from 1 4 1 5 5 5 5 0 8 0 1 on the line for Billing. They said: "Hello?"',
  )
  expect(callerWords([{ speaker: 'customer', text: '[keypad] 1234#', at }])).toEqual(['1234'])
  expect(localBrief({ ...input, transcript: [], fields: [] })).toBe(OPENING)
  // A long line is cut so the brief stays ~15 s: 20 words of each quote when there are two.
  const long = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ')
  const [first, latest] = callerWords([
    { speaker: 'customer', text: long, at },
    { speaker: 'customer', text: long, at },
  ])
  expect(first!.split(' ')).toHaveLength(21)
  expect(first!.endsWith('w19 …')).toBe(true)
  expect(latest!.startsWith('… w40')).toBe(true)
})

test('OpenAI: the model writes what the caller wants and what was done, after our fixed opening; bounded in tokens', async () => {
  const model = createLanguageModel({ provider: 'openai', model: 'gpt-4o-mini', apiKey: OPENAI_KEY, baseUrl: vendors.openai.baseUrl })
  vendors.openai.reply({ kind: 'stream', text: ['"They were charged twice this month on account 4471 and want a refund. ', 'I flagged both charges."'] })
  const written = await writeBrief(model, input)
  expect(written).toEqual({ text: `${OPENING} They were charged twice this month on account 4471 and want a refund. I flagged both charges.`, by: 'model', fallback: null })
  const sent = vendors.openai.requests.at(-1)!.body
  expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(BRIEF_MAX_TOKENS)
  expect(sent.temperature).toBe(0)
  expect(sent.tools).toBeUndefined()
  expect(sent.messages[0].content).toContain('what the caller wants and what was already done')
  expect(sent.messages[1].content).toBe(
    [
      'Agent: Hello, this is the front desk. What is your account number?',
      'Customer: Hi.',
      'Customer: My account number is 4471 and I was charged twice this month.',
      'Agent: I see two charges on the third. I have flagged them.',
      'Customer: Can I talk to a person about a refund?',
    ].join('\n'),
  )
})

test('Anthropic: the same brief over the Messages API', async () => {
  const model = createLanguageModel({ provider: 'anthropic', model: 'claude-3-5-haiku-latest', apiKey: ANTHROPIC_KEY, baseUrl: vendors.anthropic.baseUrl })
  vendors.anthropic.reply({ kind: 'stream', blocks: [{ text: ['They want a refund for a double charge. ', 'Both charges are flagged. ', 'A third sentence is dropped.'] }] })
  expect(await writeBrief(model, input)).toEqual({ text: `${OPENING} They want a refund for a double charge. Both charges are flagged.`, by: 'model', fallback: null })
  const sent = vendors.anthropic.requests.at(-1)!.body
  expect(sent.max_tokens).toBe(BRIEF_MAX_TOKENS)
  expect(sent.system).toContain('never invent names, numbers or promises')
})

test('a model that stalls past the deadline, fails or writes nothing: the template, with the reason', async () => {
  const model = createLanguageModel({ provider: 'openai', model: 'gpt-4o-mini', apiKey: OPENAI_KEY, baseUrl: vendors.openai.baseUrl })
  // Headers never come: the deadline (shortened here; 4 s in service) ends the wait.
  vendors.openai.reply({ kind: 'hang', ms: 30_000 })
  const started = Date.now()
  const late = await writeBrief(model, input, { deadlineMs: 300 })
  expect(Date.now() - started).toBeLessThan(25_000)
  expect(late).toEqual({ text: TEMPLATE, by: 'local', fallback: 'the model took longer than 300 ms' })
  vendors.openai.wake()
  // Words begin, then the stream stalls: the deadline covers the whole answer, not only its start.
  vendors.openai.reply({ kind: 'stream', text: ['They want ', 'a refund.'], stall: { afterFrames: 1, ms: 30_000 } })
  expect((await writeBrief(model, input, { deadlineMs: 300 })).fallback).toBe('the model took longer than 300 ms')
  vendors.openai.wake()
  vendors.openai.reply({ kind: 'error', status: 500, message: 'The server had an error.' })
  const failed = await writeBrief(model, input)
  expect(failed.text).toBe(TEMPLATE)
  expect(failed.fallback).toContain('error')
  const anthropicModel = createLanguageModel({ provider: 'anthropic', model: 'claude-3-5-haiku-latest', apiKey: ANTHROPIC_KEY, baseUrl: vendors.anthropic.baseUrl })
  vendors.anthropic.reply({ kind: 'stream', blocks: [{ text: ['  '] }] })
  expect(await writeBrief(anthropicModel, input)).toEqual({ text: TEMPLATE, by: 'local', fallback: 'the model wrote nothing' })
  vendors.anthropic.reply({ kind: 'hang', ms: 30_000 })
  expect((await writeBrief(anthropicModel, input, { deadlineMs: 300 })).fallback).toBe('the model took longer than 300 ms')
})

test('the caller left while the brief was written: the request is aborted and nothing is said', async () => {
  const model = createLanguageModel({ provider: 'openai', model: 'gpt-4o-mini', apiKey: OPENAI_KEY, baseUrl: vendors.openai.baseUrl })
  vendors.openai.reply({ kind: 'hang', ms: 30_000 })
  const left = new AbortController()
  const writing = writeBrief(model, input, { signal: left.signal })
  setTimeout(() => left.abort(), 100)
  await expect(writing).rejects.toThrow()
  vendors.openai.wake()
})

test('spoken words: markup and wrapping quotes dropped, two sentences at most, a sentence cut by the token bound left out', () => {
  expect(spokenSummary('**They** want a refund.\n\nDone.', false)).toBe('They want a refund. Done.')
  expect(spokenSummary('They want a refund. I flagged the charg', true)).toBe('They want a refund.')
  expect(spokenSummary('They want a refund and', true)).toBe('They want a refund and')
  expect(spokenSummary(' "" ', false)).toBeNull()
})
