/**
 * Console: connecting Telegram bots to agents (the `botapp` channel). docs/design.md's console table has
 * no route for it, so these sit beside `inbound` under the workspace:
 * `PUT /console/workspaces/{ws}/botapp` `{ agent, token, externalAgents? }` connects (or re-connects)
 * a bot, `GET` lists them, `DELETE …/botapp/{bot}` disconnects one. Tokens are never shown again.
 */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import type { BotConnections } from './bots'

const Bot = t.Object({
  bot: t.String({ description: "Telegram's id of the bot" }),
  username: t.String(),
  agent: t.String(),
  externalAgents: t.Boolean(),
  tokenLast4: t.String(),
  connectedAt: t.String(),
})

export function botsConsole(deps: { auth: KernelHttp['console']; bots: BotConnections }) {
  return new Elysia({ detail: { tags: ['Console'] } })
    .use(deps.auth)
    .put('/workspaces/:ws/botapp', ({ body, workspace }) => deps.bots.connect(workspace.id, body), {
      params: t.Object({ ws: t.String() }),
      workspace: true,
      body: t.Object(
        {
          agent: t.String({ description: 'the agent that answers the bot (ag_…)' }),
          token: t.String({ maxLength: 100, description: "the bot's token from BotFather" }),
          externalAgents: t.Optional(t.Boolean({ description: 'on: the developer answers (message.received, then reply); default off' })),
        },
        { additionalProperties: false },
      ),
      detail: { summary: 'Connect a Telegram bot to an agent', responses: answers({ 200: Bot, ...consoleErrors(400, 404, 409, 502) }) },
    })
    .get('/workspaces/:ws/botapp', async ({ workspace }) => ({ data: await deps.bots.list(workspace.id) }), {
      params: t.Object({ ws: t.String() }),
      workspace: true,
      detail: { summary: "The workspace's bots", responses: answers({ 200: t.Object({ data: t.Array(Bot) }), ...consoleErrors(404) }) },
    })
    .delete('/workspaces/:ws/botapp/:bot', ({ params, workspace }) => deps.bots.disconnect(workspace.id, params.bot), {
      params: t.Object({ ws: t.String(), bot: t.String() }),
      workspace: true,
      detail: { summary: 'Disconnect a bot', responses: answers({ 200: t.Object({ ok: t.Boolean() }), ...consoleErrors(404) }) },
    })
}
