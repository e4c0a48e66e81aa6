/** POST /agents/{id}/test-chat (docs/spec.md Agents): talk to the real agent with side effects off. */
import { Elysia, t } from 'elysia'
import { answers, v1Errors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { TEST_CHAT_MESSAGE_MAX, type TestChatService } from './test-chat'

export const TestChatBody = t.Object(
  {
    message: t.String({ minLength: 1, maxLength: TEST_CHAT_MESSAGE_MAX, description: `what the customer writes, 1–${TEST_CHAT_MESSAGE_MAX} characters` }),
    session: t.Optional(t.String({ minLength: 1, maxLength: 100, description: 'the `session` of an earlier answer, to continue that chat' })),
  },
  { additionalProperties: false },
)

export const TestChatAnswer = t.Object({
  session: t.String({ description: 'send it back to continue; it is the test conversation’s id' }),
  reply: t.String(),
  tools: t.Array(t.Object({ name: t.String(), input: t.Record(t.String(), t.Unknown()), output: t.Unknown() })),
})

export function testChatV1(deps: { context: KernelHttp['v1']; testChat: TestChatService }) {
  return new Elysia({ prefix: '/agents', detail: { tags: ['Agents'] } }).use(deps.context).post('/:id/test-chat', ({ params, body, workspace }) => deps.testChat.send(workspace, params.id, body), {
    // docs/spec.md Authentication: test chat runs the model, so a read key is refused (403).
    scope: 'build',
    params: t.Object({ id: t.String() }),
    body: TestChatBody,
    detail: {
      responses: answers({ 200: TestChatAnswer, ...v1Errors(400, 402, 403, 404, 409, 429, 502, 503) }),
      summary: 'Chat with the agent as a customer would (test chat)',
      description:
        'Runs the real agent: same instructions, model, knowledge and actions as website chat. Anything that would phone, message, email, send a code or change a calendar booking is switched off and the agent says what it would have done; lead capture and escalation are real. 409 when website chat is off; 429 (with Retry-After) when messages come faster than a person could type; 503 when the agent’s model has no provider key configured.',
    },
  })
}
