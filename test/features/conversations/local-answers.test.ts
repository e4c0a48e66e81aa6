/**
 * The `local` model answers from what the business wrote (its knowledge passages, greeting,
 * instructions and steps, by retrieval, with no network), through the real engine and system prompt:
 * business instructions and steps count, the starter persona's generic sentences do not.
 */
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { starterPersona } from '../../../src/features/agents/defaults'
import { NO_ANSWER } from '../../../src/providers/llm/local'
import { FAQ, type Harness, startHarness } from './harness'

const HOURS = 'Our office hours are 9am to 5pm Monday to Friday.'

describe('local model: instructions and steps', () => {
  let h: Harness
  beforeEach(async () => {
    await h?.close()
    h = await startHarness()
  })
  afterAll(() => h?.close())

  const ask = async (text: string, fields = {}, knowledge?: string) => {
    const agent = await h.agent(fields)
    if (knowledge) await h.knowledge.addText({ workspaceId: h.workspace.id, agentId: agent.id, text: knowledge, title: 'Shop FAQ' })
    const conversation = await h.conversations.start({ workspaceId: h.workspace.id, agentId: agent.id, channel: 'web' })
    return h.engine.respond({ workspace: h.workspace, agent, conversation, text, sideEffects: 'simulated' })
  }

  test('answers from the instructions when the knowledge has nothing', async () => {
    const r = await ask('What are your office hours?', { instructions: `${starterPersona('Ava')}\n${HOURS}` })
    expect(r.reply).toBe(HOURS)
    expect(r.tools.map((t) => t.name)).toEqual(['search_knowledge'])
  })

  test('answers from a step', async () => {
    const steps = [
      { title: 'Greet the customer', detail: '' },
      { title: 'Table bookings', detail: 'Ask for the date, the time and how many guests are coming.' },
    ]
    const r = await ask('How do table bookings work?', { steps })
    expect(r.reply).toBe('Ask for the date, the time and how many guests are coming.')
  })

  test('the starter persona is not a source of answers', async () => {
    for (const question of ['Can you answer questions about the business knowledge?', 'What are your prices and policies?']) {
      expect((await ask(question)).reply).toBe(NO_ANSWER)
    }
  })

  test('knowledge and instructions are ranked together', async () => {
    const instructions = `${HOURS}\nWe never take bookings by email.`
    expect((await ask('What are your office hours?', { instructions }, FAQ)).reply).toBe(HOURS)
    const sunday = await ask('What are your opening hours on Sunday?', { instructions }, FAQ)
    expect(sunday.reply).toContain('8 am to 2 pm')
    expect(sunday.reply).toContain('(Source: Shop FAQ)')
  })

  test('a passage answer does not repeat its section heading', async () => {
    const r = await ask('When are refunds paid?', {}, 'Refunds\n\nRefunds are paid within 14 days of your request. Gift cards are not refunded.')
    expect(r.reply).toBe('Refunds are paid within 14 days of your request. (Source: Shop FAQ)')
  })
})
