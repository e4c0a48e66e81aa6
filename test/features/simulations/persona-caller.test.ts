/**
 * A persona caller's lines, through the OpenAI and Anthropic fakes (their real wire protocols):
 * the request each turn makes (temperature 0, the seed where the vendor takes one, the token cap),
 * the hang-up marker, maxTurns, and a model that fails or stalls past the timeout failing with
 * a PersonaError that names the model, never an empty line.
 */
import { expect, test } from 'bun:test'
import { HANG_UP, PERSONA_MAX_TOKENS, PersonaCaller, PersonaError, readLine } from '../../../src/features/simulations/persona-caller'
import { createLanguageModel } from '../../../src/providers/llm'
import { useLlmVendorFakes } from '../../support/llm-vendors'

const OPENAI_KEY = 'sk-persona-openai-0123456789'
const ANTHROPIC_KEY = 'sk-ant-persona-0123456789'
const vendors = useLlmVendorFakes({ openai: OPENAI_KEY, anthropic: ANTHROPIC_KEY })

const SPEC = { persona: 'Dana, who was charged twice', goal: 'get the second charge refunded' }
const gpt = () => createLanguageModel({ provider: 'openai', model: 'gpt-4o-mini', apiKey: OPENAI_KEY, baseUrl: vendors.openai.baseUrl })
const claude = () => createLanguageModel({ provider: 'anthropic', model: 'claude-3-5-haiku-latest', apiKey: ANTHROPIC_KEY, baseUrl: vendors.anthropic.origin })
const words = (text: string) => ({ kind: 'stream' as const, text: text.match(/\s*\S+/g) ?? [] })

test('OpenAI: each line from the conversation so far, at temperature 0 with the seed and the cap; the marker hangs up after its line', async () => {
  const caller = new PersonaCaller(gpt(), SPEC, 42)
  vendors.openai.reply(words('Hi, I was charged twice this month.'), words(`"Thanks, that is all." ${HANG_UP}`))
  const before = vendors.openai.requests.length
  expect(await caller.next([{ speaker: 'agent', text: 'Hello, how can I help?' }])).toBe('Hi, I was charged twice this month.')
  const heard = [
    { speaker: 'agent', text: 'Hello, how can I help?' },
    { speaker: 'customer', text: 'Hi, I was charged twice this month.' },
    { speaker: 'agent', text: 'I have refunded the second charge.' },
  ]
  expect(await caller.next(heard)).toBe('Thanks, that is all.')
  expect(await caller.next(heard)).toBeNull()
  const [first, second] = vendors.openai.requests.slice(before)
  expect(vendors.openai.requests.length - before).toBe(2)
  expect(first!.body).toMatchObject({ temperature: 0, seed: 42, max_completion_tokens: PERSONA_MAX_TOKENS })
  expect(first!.body.messages[0].content).toContain(SPEC.persona)
  expect(first!.body.messages[0].content).toContain(SPEC.goal)
  expect(second!.body.messages[1].content).toBe(
    'The conversation so far:\nAgent: Hello, how can I help?\nYou: Hi, I was charged twice this month.\nAgent: I have refunded the second charge.\n\nWrite your next line.',
  )
})

test('Anthropic: the same request on its wire (no seed: it takes none); maxTurns ends a caller that never hangs up', async () => {
  const caller = new PersonaCaller(claude(), { ...SPEC, maxTurns: 1 }, 42)
  vendors.anthropic.reply({ kind: 'stream', blocks: [{ text: ['Caller: ', 'I was charged twice.'] }] })
  const before = vendors.anthropic.requests.length
  expect(await caller.next([])).toBe('I was charged twice.')
  expect(await caller.next([{ speaker: 'agent', text: 'Let me look.' }])).toBeNull()
  const [ask] = vendors.anthropic.requests.slice(before)
  expect(vendors.anthropic.requests.length - before).toBe(1)
  expect(ask!.body).toMatchObject({ temperature: 0, max_tokens: PERSONA_MAX_TOKENS })
  expect(ask!.body.seed).toBeUndefined()
  expect(ask!.body.messages[0].content[0].text).toBe('The conversation has just opened; nothing has been said yet. Write your first line.')
})

test('a model that fails, stalls past the timeout or writes nothing: a PersonaError naming the model', async () => {
  vendors.openai.reply({ kind: 'error', status: 500, message: 'The server had an error.', type: 'server_error' })
  const failed = await new PersonaCaller(gpt(), SPEC, 1).next([]).catch((e) => e)
  expect(failed).toBeInstanceOf(PersonaError)
  expect(failed.message).toStartWith('the caller’s model (openai gpt-4o-mini) failed:')
  expect(failed.message).toContain('The server had an error.')

  vendors.anthropic.reply({ kind: 'hang', ms: 30_000 })
  const slow = await new PersonaCaller(claude(), SPEC, 1, 300).next([]).catch((e) => e)
  expect(slow).toBeInstanceOf(PersonaError)
  expect(slow.message).toBe('the caller’s model (anthropic claude-3-5-haiku-latest) took longer than 300 ms')

  vendors.openai.reply(words('  '))
  const empty = await new PersonaCaller(gpt(), SPEC, 1).next([]).catch((e) => e)
  expect(empty.message).toBe('the caller’s model (openai gpt-4o-mini) wrote no line')
})

test('an opening is the first line word for word; readLine takes off the marker, labels, quotes and markup', async () => {
  const before = vendors.openai.requests.length
  expect(await new PersonaCaller(gpt(), { ...SPEC, opening: '  Hi there.  ' }, 1).next([])).toBe('Hi there.')
  expect(vendors.openai.requests.length).toBe(before)
  expect(readLine('**You:** "Bye now." [HANG UP]')).toEqual({ line: 'Bye now.', hangUp: true })
  expect(readLine(HANG_UP)).toEqual({ line: null, hangUp: true })
  expect(readLine('x'.repeat(400)).line).toHaveLength(300)
})
