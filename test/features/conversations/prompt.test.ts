import { describe, expect, test } from 'bun:test'
import type { AgentDoc } from '../../../src/features/agents/repository'
import { buildSystemPrompt } from '../../../src/features/conversations/prompt'
import { toolSpecs, toolsFor } from '../../../src/features/conversations/tools'
import { greetingFrom } from '../../../src/providers/llm/local-text'

const agent = (fields: Partial<AgentDoc> = {}): AgentDoc =>
  ({
    id: 'ag_1',
    workspaceId: 'ws_1',
    name: 'Ava',
    instructions: 'Be warm.\nGreeting: not this one',
    greeting: 'Welcome to Bean There! What can I get you?',
    businessDescription: 'A coffee shop in Pune',
    model: 'local',
    temperature: 0.7,
    maxReplyTokens: 300,
    language: 'auto',
    secondLanguage: 'Hindi',
    escalation: { onNoAnswer: false, onRequest: true },
    captureLeads: true,
    scheduleCallbacks: false,
    steps: [],
    ...fields,
  }) as AgentDoc

describe('system prompt', () => {
  test('facts first: the configured greeting is the line the local model reads', () => {
    const p = buildSystemPrompt(agent(), { channel: 'web', tools: ['search_knowledge'] })
    expect(greetingFrom(p)).toBe('Welcome to Bean There! What can I get you?')
    expect(p).toContain('Business: A coffee shop in Pune')
    expect(p).toContain('Instructions from the business:\nBe warm.')
    expect(p).toContain('the website chat')
  })

  test('language: auto follows the customer and ignores the second language', () => {
    const p = buildSystemPrompt(agent(), { channel: 'web', tools: [] })
    expect(p).toContain('Language: reply in the language the customer writes in.')
    expect(p).not.toContain('Hindi')
  })

  test('language and second language', () => {
    const p = buildSystemPrompt(agent({ language: 'English', secondLanguage: 'Hindi' }), { channel: 'web', tools: [] })
    expect(p).toContain('Language: reply in English; if the customer writes in Hindi or asks for it, you may switch to Hindi.')
    expect(buildSystemPrompt(agent({ language: 'Tamil', secondLanguage: null }), { channel: 'web', tools: [] })).toContain('Language: reply in Tamil.')
  })

  test('steps in order', () => {
    const p = buildSystemPrompt(
      agent({
        steps: [
          { title: 'Greet', detail: 'Say hello' },
          { title: 'Ask the order', detail: '' },
          { title: 'Confirm', detail: 'Read it back' },
        ],
      }),
      { channel: 'web', tools: [] },
    )
    expect(p).toContain('Steps to follow, in order:\n1. Greet — Say hello\n2. Ask the order\n3. Confirm — Read it back')
  })

  test('rules mention only the tools offered; voice speaks plainly', () => {
    const a = agent({ scheduleCallbacks: true, escalation: { onNoAnswer: true, onRequest: false } })
    const tools = toolsFor(a, 'voice')
    expect(tools).toEqual(['search_knowledge', 'capture_lead', 'escalate', 'schedule_callback', 'end_call', 'send_digits'])
    const p = buildSystemPrompt(a, { channel: 'voice', tools })
    expect(p).toContain('call end_call')
    expect(p).toContain('call send_digits')
    expect(p).toContain('call schedule_callback')
    expect(p).toContain('When you cannot answer and the customer still needs help, call escalate')
    expect(p).not.toContain('asks for a person, call escalate')
    expect(p).toContain('no markdown')
    const plain = buildSystemPrompt(agent({ captureLeads: false }), { channel: 'web', tools: ['search_knowledge'] })
    expect(plain).not.toContain('capture_lead')
    expect(plain).not.toContain('escalate')
  })

  test('tools: end_call only on calls; escalate when either switch is on', () => {
    expect(toolsFor(agent(), 'web')).toEqual(['search_knowledge', 'capture_lead', 'escalate'])
    expect(toolsFor(agent({ captureLeads: false, escalation: { onNoAnswer: false, onRequest: false } }), 'chatapp')).toEqual(['search_knowledge'])
  })
})

describe('system prompt: business instructions apart from the starter persona', () => {
  test('starter sentences (under any name) go to Manner; the rest, without blank lines, to the business section', async () => {
    const { starterPersona, isStarterPersonaLine } = await import('../../../src/features/agents/defaults')
    const p = buildSystemPrompt(agent({ instructions: `${starterPersona('Old Name')}\n\nOur office hours are 9am to 5pm.\n\nWe close on holidays.` }), { channel: 'web', tools: [] })
    expect(p).toContain('Manner:\nYou are Old Name, a friendly and concise assistant for this business.\n')
    expect(p).toContain('Instructions from the business:\nOur office hours are 9am to 5pm.\nWe close on holidays.\n\n')
    expect(isStarterPersonaLine('Never invent prices, policies or promises.')).toBe(true)
    expect(isStarterPersonaLine('Never invent prices.')).toBe(false)
  })

  test('only the starter persona: no business section', () => {
    const p = buildSystemPrompt(agent({ instructions: 'Keep replies short: two or three sentences, one question at a time.' }), { channel: 'web', tools: [] })
    expect(p).not.toContain('Instructions from the business:')
  })
})

describe('transfer_call', () => {
  const desk = agent({ transfers: [{ name: 'Billing', phoneNumber: '+14155550199', whenToUse: 'bills and refunds', mode: 'cold' }] })
  test('offered on calls of an agent with transfers, never in chats or without transfers', () => {
    expect(toolsFor(desk, 'voice')).toContain('transfer_call')
    expect(toolsFor(desk, 'web')).not.toContain('transfer_call')
    expect(toolsFor(agent({ transfers: [] }), 'voice')).not.toContain('transfer_call')
    // An agent stored before transfers existed has none.
    expect(toolsFor(agent(), 'voice')).not.toContain('transfer_call')
  })
  test('the model reads each destination and when to use it, in the tool and the prompt', () => {
    const [spec] = toolSpecs(['transfer_call'], desk)
    expect(spec!.parameters).toMatchObject({ properties: { destination: { enum: ['Billing'] } }, required: ['destination'] })
    expect(spec!.description).toContain('"Billing": bills and refunds')
    expect(buildSystemPrompt(desk, { channel: 'voice', tools: ['transfer_call'] })).toContain('call transfer_call with its name: Billing (bills and refunds).')
  })
})
