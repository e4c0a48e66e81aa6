import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { MAX_TOOL_ROUNDS, NO_REPLY } from '../../../src/features/conversations/engine'
import { apiErrorOf } from '../../../src/http/refusals'
import { ESCALATED, LEAD_NOTED, NO_ANSWER } from '../../../src/providers/llm/local'
import { Refused } from '../../../src/refusals'
import { type FakeOpenAI, startOpenAIFake } from '../../fakes/openai'
import { FAQ, type Harness, startHarness } from './harness'

const KEY = 'sk-test-engine-0123456789'

describe('engine with the local model (no network)', () => {
  let h: Harness
  beforeEach(async () => {
    await h?.close()
    h = await startHarness()
  })
  afterAll(() => h?.close())

  const chat = async (agentFields = {}) => {
    const agent = await h.agent(agentFields)
    const conversation = await h.conversations.start({ workspaceId: h.workspace.id, agentId: agent.id, channel: 'web' })
    return { agent, conversation }
  }

  test('answers from a pasted document, citing it, and records both messages and the reply count', async () => {
    const { agent, conversation } = await chat()
    await h.knowledge.addText({ workspaceId: h.workspace.id, agentId: agent.id, text: FAQ, title: 'Shop FAQ' })
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'What are your opening hours on Sunday?', sideEffects: 'simulated' })
    expect(r.reply).toContain('8 am to 2 pm')
    expect(r.reply).toContain('(Source: Shop FAQ)')
    expect(r.tools).toHaveLength(1)
    expect(r.tools[0]).toMatchObject({ name: 'search_knowledge', input: { query: 'What are your opening hours on Sunday?' }, output: { found: true } })
    const history = await h.conversations.history(conversation.id, 10)
    expect(history.map((m) => m.author)).toEqual(['customer', 'agent'])
    expect(history[1].tools?.[0].name).toBe('search_knowledge')
    expect(r.conversation.lastInboundAt).toBe(new Date(h.clock.now()).toISOString())
    const usage = await h.ledger.records.find({ workspaceId: h.workspace.id })
    expect(usage).toHaveLength(1)
    expect(usage[0]).toMatchObject({ kind: 'reply', quantity: 1, costMicro: 0, developerId: h.workspace.id, conversationId: conversation.id })
  })

  test('on a call, a phone menu gets the key for the call (send_digits); in a chat the tool is not offered', async () => {
    const agent = await h.agent({ instructions: 'You call clinics to book an appointment for a patient.' })
    const call = await h.conversations.start({ workspaceId: h.workspace.id, agentId: agent.id, channel: 'voice' })
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation: call, text: 'Press 1 for appointments, press 2 for billing.', sideEffects: 'simulated' })
    expect(r.digits).toBe('1')
    expect(r.tools[0]).toMatchObject({ name: 'send_digits', input: { digits: '1' }, output: { sent: true, digits: '1' } })
    expect(r.reply).toBe('')
    expect((await h.conversations.history(call.id, 10)).map((m) => (m.parts[0] as { text?: string })?.text)).toEqual(['Press 1 for appointments, press 2 for billing.', '[keypad] 1'])
    const { conversation } = await chat({ instructions: 'You call clinics to book an appointment for a patient.' })
    const web = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Press 1 for appointments, press 2 for billing.', sideEffects: 'simulated' })
    expect(web.digits ?? null).toBeNull()
    expect(web.tools.map((t) => t.name)).not.toContain('send_digits')
  })

  test('says plainly when the knowledge has no answer', async () => {
    const { agent, conversation } = await chat()
    await h.knowledge.addText({ workspaceId: h.workspace.id, agentId: agent.id, text: FAQ })
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Do you sell bicycles?', sideEffects: 'live' })
    expect(r.reply).toBe(NO_ANSWER)
    expect(r.tools[0].output).toEqual({ found: false, passages: [] })
  })

  test('escalates on request: status escalated, conversation.escalated on the bus, only once', async () => {
    const { agent, conversation } = await chat()
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Can I talk to a real person please?', sideEffects: 'simulated' })
    expect(r.reply).toBe(ESCALATED)
    expect(r.conversation.status).toBe('escalated')
    expect(r.tools[0]).toMatchObject({ name: 'escalate', output: { escalated: true } })
    const escalations = h.events.filter((e) => e.type === 'conversation.escalated')
    expect(escalations).toHaveLength(1)
    expect(escalations[0]).toMatchObject({ workspaceId: h.workspace.id, agentId: agent.id, data: { conversationId: conversation.id, channel: 'web', test: false } })
    const again = await h.engine.respond({ workspace: h.workspace, agent, conversation: r.conversation, text: 'I want a human', sideEffects: 'simulated' })
    expect(again.tools[0].output).toMatchObject({ escalated: false, status: 'escalated' })
    expect(h.events.filter((e) => e.type === 'conversation.escalated')).toHaveLength(1)
  })

  test('without escalation the tool is not offered', async () => {
    const { agent, conversation } = await chat({ escalation: { onRequest: false, onNoAnswer: false } })
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Can I talk to a person?', sideEffects: 'live' })
    expect(r.tools.map((t) => t.name)).toEqual(['search_knowledge'])
    expect(r.conversation.status).toBe('active')
  })

  test('captures a lead: lead.captured with name, email and phone', async () => {
    const { agent, conversation } = await chat()
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: "I'm Priya Shah, reach me at Priya@Example.com or +1 415 555 0100", sideEffects: 'simulated' })
    expect(r.reply).toBe(LEAD_NOTED)
    const lead = h.events.find((e) => e.type === 'lead.captured')
    expect(lead?.data).toEqual({ conversationId: conversation.id, channel: 'web', test: false, name: 'Priya Shah', email: 'priya@example.com', phone: '+14155550100', note: null })
  })

  test('a conversation a teammate took over gets the message recorded and no reply', async () => {
    const { agent, conversation } = await chat()
    await h.conversations.takeOver(h.workspace.id, conversation.id)
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Hello?', sideEffects: 'live' })
    expect(r).toMatchObject({ answered: false, reply: '', replyMessage: null })
    expect((await h.conversations.history(conversation.id, 10)).map((m) => m.author)).toEqual(['customer'])
  })

  test('a model with no provider key is a 503 naming the missing key, and nothing is recorded', async () => {
    const { agent, conversation } = await chat({ model: 'gpt-4o-mini' })
    const err = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Hi', sideEffects: 'live' }).catch((e) => e)
    expect(err).toBeInstanceOf(Refused)
    expect(apiErrorOf(err)?.status).toBe(503)
    expect(err.message).toContain('OPENAI_API_KEY')
    expect(await h.conversations.history(conversation.id, 10)).toEqual([])
  })
})

describe('engine with an OpenAI-protocol model (local fake)', () => {
  let fake: FakeOpenAI
  let h: Harness
  beforeAll(() => {
    fake = startOpenAIFake({ apiKey: KEY })
  })
  beforeEach(async () => {
    await h?.close()
    fake.requests.length = 0
    h = await startHarness({ accounts: { openaiApiKey: KEY, openaiBaseUrl: fake.baseUrl } })
  })
  afterAll(async () => {
    await h?.close()
    await fake.stop()
  })

  const setup = async (fields = {}) => {
    const agent = await h.agent({ model: 'gpt-4o-mini', temperature: 0.3, maxReplyTokens: 250, ...fields })
    const conversation = await h.conversations.start({ workspaceId: h.workspace.id, agentId: agent.id, channel: 'web', test: true })
    return { agent, conversation }
  }
  const call = (id: string, name: string, args: unknown) => ({ id, name, args: [JSON.stringify(args)] })

  test('loops model → tool → model; passes temperature, maxReplyTokens and the offered tools', async () => {
    const { agent, conversation } = await setup()
    await h.knowledge.addText({ workspaceId: h.workspace.id, agentId: agent.id, text: FAQ, title: 'Shop FAQ' })
    fake.reply(
      { kind: 'stream', toolCalls: [call('call_1', 'search_knowledge', { query: 'refunds working days' })] },
      { kind: 'stream', text: ['Refunds take 3 to 5 ', 'working days.'], usage: { prompt_tokens: 90, completion_tokens: 8 } },
    )
    const pieces: string[] = []
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'How long do refunds take?', sideEffects: 'simulated', onText: (p) => pieces.push(p) })
    expect(r.reply).toBe('Refunds take 3 to 5 working days.')
    expect(pieces.join('')).toBe(r.reply)
    expect(fake.requests).toHaveLength(2)
    const [first, second] = fake.requests.map((q) => q.body)
    expect(first.temperature).toBe(0.3)
    expect(first.max_completion_tokens).toBe(250)
    expect(first.model).toBe('gpt-4o-mini')
    expect(first.tools.map((t: any) => t.function.name)).toEqual(['search_knowledge', 'capture_lead', 'escalate'])
    expect(first.messages[0].role).toBe('system')
    expect(first.messages[first.messages.length - 1]).toEqual({ role: 'user', content: 'How long do refunds take?' })
    const toolMessage = second.messages.find((m: any) => m.role === 'tool')
    expect(toolMessage.tool_call_id).toBe('call_1')
    expect(JSON.parse(toolMessage.content)).toMatchObject({ found: true, passages: [{ title: 'Shop FAQ' }] })
    expect(r.tools).toEqual([{ id: 'call_1', name: 'search_knowledge', input: { query: 'refunds working days' }, output: expect.objectContaining({ found: true }) }])
  })

  test('remembers earlier turns, tool calls included', async () => {
    const { agent, conversation } = await setup()
    fake.reply(
      { kind: 'stream', toolCalls: [call('call_a', 'capture_lead', { name: 'Ravi', email: 'ravi@example.com' })] },
      { kind: 'stream', text: ['Thanks Ravi.'] },
      { kind: 'stream', text: ['You are welcome.'] },
    )
    const one = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'I am Ravi, ravi@example.com', sideEffects: 'simulated' })
    expect(h.events.find((e) => e.type === 'lead.captured')?.data).toMatchObject({ name: 'Ravi', email: 'ravi@example.com', test: true })
    await h.engine.respond({ workspace: h.workspace, agent, conversation: one.conversation, text: 'Thank you', sideEffects: 'simulated' })
    const third = fake.requests[2].body.messages.map((m: any) => [m.role, m.content ?? null, m.tool_calls?.[0]?.function.name ?? null])
    expect(third.slice(1)).toEqual([
      ['user', 'I am Ravi, ravi@example.com', null],
      ['assistant', null, 'capture_lead'],
      ['tool', JSON.stringify({ captured: true, name: 'Ravi', email: 'ravi@example.com', phone: null }), null],
      ['assistant', 'Thanks Ravi.', null],
      ['user', 'Thank you', null],
    ])
  })

  test('schedule_callback is switched off in test chat and says what it would have done', async () => {
    const { agent, conversation } = await setup({ scheduleCallbacks: true })
    fake.reply(
      { kind: 'stream', toolCalls: [call('call_cb', 'schedule_callback', { when: 'tomorrow at 10:00', phone: '+14155550100' })] },
      { kind: 'stream', text: ['I would have booked that callback.'] },
    )
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Call me back tomorrow at 10', sideEffects: 'simulated' })
    expect(fake.requests[0].body.tools.map((t: any) => t.function.name)).toContain('schedule_callback')
    expect(r.tools[0].output).toBe('Test chat: I would have booked a callback for tomorrow at 10:00 to +14155550100. Nothing was booked.')
  })

  test('live schedule_callback goes to the scheduler', async () => {
    const booked: unknown[] = []
    await h.close()
    h = await startHarness({
      accounts: { openaiApiKey: KEY, openaiBaseUrl: fake.baseUrl },
      callbacks: {
        schedule: async (req) => {
          booked.push(req)
          return { scheduled: true, when: req.when }
        },
      },
    })
    const { agent, conversation } = await setup({ scheduleCallbacks: true })
    fake.reply({ kind: 'stream', toolCalls: [call('c', 'schedule_callback', { when: 'Friday 9am' })] }, { kind: 'stream', text: ['Done.'] })
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Call me Friday 9am', sideEffects: 'live' })
    expect(r.tools[0].output).toEqual({ scheduled: true, when: 'Friday 9am' })
    expect(booked).toEqual([{ workspaceId: h.workspace.id, agentId: agent.id, conversationId: conversation.id, when: 'Friday 9am', phone: null, note: null }])
  })

  test(`stops after ${MAX_TOOL_ROUNDS} model calls when the model keeps calling tools`, async () => {
    const { agent, conversation } = await setup()
    for (let i = 0; i < MAX_TOOL_ROUNDS; i++) fake.reply({ kind: 'stream', toolCalls: [call(`loop_${i}`, 'search_knowledge', { query: `q ${i}` })] })
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Loop', sideEffects: 'simulated' })
    expect(fake.requests).toHaveLength(MAX_TOOL_ROUNDS)
    expect(r.tools).toHaveLength(MAX_TOOL_ROUNDS - 1)
    expect(r.reply).toBe(NO_REPLY)
  })

  test('a tool the agent does not offer is refused to the model, not run', async () => {
    const { agent, conversation } = await setup({ captureLeads: false })
    fake.reply({ kind: 'stream', toolCalls: [call('x', 'capture_lead', { email: 'a@b.co' })] }, { kind: 'stream', text: ['Ok.'] })
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'a@b.co', sideEffects: 'live' })
    expect(r.tools[0].output).toEqual({ error: 'there is no tool named capture_lead' })
    expect(h.events.some((e) => e.type === 'lead.captured')).toBe(false)
  })

  test('vendor failures become 503 (try later) or 502 (refused)', async () => {
    const { agent, conversation } = await setup()
    fake.reply({ kind: 'error', status: 429, message: 'slow down', headers: { 'retry-after': '7' } })
    const busy = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Hi', sideEffects: 'live' }).catch((e) => e)
    expect(busy).toBeInstanceOf(Refused)
    expect(apiErrorOf(busy)?.status).toBe(503)
    expect(apiErrorOf(busy)?.headers).toEqual({ 'retry-after': '7' })
    fake.reply({ kind: 'error', status: 400, message: 'bad model' })
    const refused = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Hi', sideEffects: 'live' }).catch((e) => e)
    expect(apiErrorOf(refused)?.status).toBe(502)
    expect(refused.message).toContain('bad model')
    expect(refused.message).not.toContain(KEY)
  })
})
