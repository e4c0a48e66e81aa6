/** `chat.message.completed` (docs/spec.md "Other events", legacy): one per agent reply in a chat. */
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { FAQ, type Harness, startHarness } from './harness'

describe('chat.message.completed from the engine', () => {
  let h: Harness
  beforeEach(async () => {
    await h?.close()
    h = await startHarness()
  })
  afterAll(() => h?.close())

  const completed = () => h.events.filter((e) => e.type === 'chat.message.completed')

  test('one event per agent reply, carrying the reply, its message id and the test flag', async () => {
    const agent = await h.agent()
    await h.knowledge.addText({ workspaceId: h.workspace.id, agentId: agent.id, text: FAQ, title: 'Shop FAQ' })
    const conversation = await h.conversations.start({ workspaceId: h.workspace.id, agentId: agent.id, channel: 'web', test: true })
    const r = await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'What are your opening hours on Sunday?', sideEffects: 'simulated' })
    expect(completed()).toHaveLength(1)
    expect(completed()[0]).toMatchObject({
      workspaceId: h.workspace.id,
      agentId: agent.id,
      data: { conversationId: conversation.id, messageId: r.replyMessage!.id, channel: 'web', test: true, text: r.reply, completedAt: r.replyMessage!.createdAt },
    })
    await h.engine.respond({ workspace: h.workspace, agent, conversation: r.conversation, text: 'Hello', sideEffects: 'simulated' })
    expect(completed()).toHaveLength(2)
    expect(completed()[1].data.test).toBe(true)
  })

  test('no event when the agent stays quiet (a teammate took over) or on a phone call', async () => {
    const agent = await h.agent()
    const taken = await h.conversations.start({ workspaceId: h.workspace.id, agentId: agent.id, channel: 'chatapp' })
    await h.conversations.takeOver(h.workspace.id, taken.id)
    await h.engine.respond({ workspace: h.workspace, agent, conversation: taken, text: 'Hello?', sideEffects: 'live' })
    const call = await h.conversations.start({ workspaceId: h.workspace.id, agentId: agent.id, channel: 'voice' })
    const spoken = await h.engine.respond({ workspace: h.workspace, agent, conversation: call, text: 'Hello', sideEffects: 'live' })
    expect(spoken.replyMessage).not.toBeNull()
    expect(completed()).toEqual([])
  })

  test('a live chat says test: false', async () => {
    const agent = await h.agent()
    const conversation = await h.conversations.start({ workspaceId: h.workspace.id, agentId: agent.id, channel: 'chatapp' })
    await h.engine.respond({ workspace: h.workspace, agent, conversation, text: 'Hello', sideEffects: 'live' })
    expect(completed().map((e) => e.data)).toMatchObject([{ conversationId: conversation.id, channel: 'chatapp', test: false }])
  })
})
