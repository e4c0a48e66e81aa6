/**
 * A publish that keeps losing the race for its agent (another command wins every attempt) answers
 * 503 with Retry-After, so a client knows it may try again, and when.
 */
import { expect, test } from 'bun:test'
import pino from 'pino'
import { agentPublicationMachine, initialContext } from '../../../machines/agent-publication'
import { ManualClock } from '../../../src/clock'
import { Publication } from '../../../src/features/versions/publication'
import { apiErrorOf } from '../../../src/http/refusals'
import { Refused } from '../../../src/refusals'

test('busy with other version changes: 503 with Retry-After', async () => {
  const agent = { id: 'ag_1', workspaceId: 'ws_1' }
  // Every send finds the agent published again by someone else's command.
  const published = agentPublicationMachine.resolveState({ value: 'published', context: { ...initialContext({ agentId: agent.id, workspaceId: agent.workspaceId }), lastCommandId: 'someone-else' } })
  const kind: ConstructorParameters<typeof Publication>[0] = {
    read: async () => null,
    send: async () => published,
    settle: async () => {
      throw new Error('a busy publish settles nothing')
    },
  }
  const publication = new Publication(kind, new ManualClock(0), pino({ level: 'silent' }))
  const refused = await publication.command(agent, 'key_1', { type: 'agent.publish', changeSummary: null }).catch((err: unknown) => err)
  expect(refused).toBeInstanceOf(Refused)
  const answer = apiErrorOf(refused)
  expect(answer?.status).toBe(503)
  expect(answer?.message).toMatch(/busy/)
  expect(answer?.headers).toEqual({ 'retry-after': '1' })
})
