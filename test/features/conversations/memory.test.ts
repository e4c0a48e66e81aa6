import { describe, expect, test } from 'bun:test'
import { MEMORY_MESSAGES, MEMORY_TOOL_OUTPUT_CHARS, memoryTurns } from '../../../src/features/conversations/memory'
import type { MessageDoc } from '../../../src/features/conversations/model'

let n = 0
const msg = (author: MessageDoc['author'], text: string, extra: Partial<MessageDoc> = {}): MessageDoc => ({
  id: `msg_${String(++n).padStart(4, '0')}`,
  conversationId: 'conv_1',
  workspaceId: 'ws_1',
  agentId: 'ag_1',
  author,
  parts: [{ type: 'text', text }],
  internal: false,
  createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  ...extra,
})

describe('memory', () => {
  test('customer → user, agent → assistant with its tool calls and results before the reply', () => {
    const turns = memoryTurns([
      msg('customer', 'Refunds?'),
      msg('agent', 'Three days.', { tools: [{ id: 'c1', name: 'search_knowledge', input: { query: 'refunds' }, output: { found: true, passages: [] } }] }),
      msg('teammate', 'I can help too.'),
    ])
    expect(turns).toEqual([
      { role: 'user', content: 'Refunds?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'search_knowledge', arguments: { query: 'refunds' } }] },
      { role: 'tool', content: '{"found":true,"passages":[]}', toolCallId: 'c1', name: 'search_knowledge' },
      { role: 'assistant', content: 'Three days.' },
      { role: 'assistant', content: '(A person from the team wrote:) I can help too.' },
    ])
  })

  test(`keeps at most ${MEMORY_MESSAGES} messages, the newest`, () => {
    const history = Array.from({ length: MEMORY_MESSAGES + 5 }, (_, i) => msg(i % 2 ? 'agent' : 'customer', `m${i}`))
    const turns = memoryTurns(history)
    expect(turns).toHaveLength(MEMORY_MESSAGES)
    expect(turns[turns.length - 1].content).toBe(`m${MEMORY_MESSAGES + 4}`)
    expect(turns[0].content).toBe('m5')
  })

  test('keeps within the character budget, dropping whole old messages', () => {
    const history = [msg('customer', 'a'.repeat(600)), msg('agent', 'b'.repeat(600)), msg('customer', 'c'.repeat(300))]
    expect(memoryTurns(history, 1000).map((t) => t.content[0])).toEqual(['b', 'c'])
  })

  test('long tool outputs are cut in memory', () => {
    const long = 'x'.repeat(MEMORY_TOOL_OUTPUT_CHARS * 3)
    const turns = memoryTurns([msg('agent', 'ok', { tools: [{ id: 't', name: 'search_knowledge', input: {}, output: long }] })])
    expect(turns[1].content.length).toBe(MEMORY_TOOL_OUTPUT_CHARS + 1)
  })
})
