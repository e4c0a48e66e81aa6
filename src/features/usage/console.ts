/** POST /console/workspaces/{ws}/wallet (docs/design.md console table): credit the developer's wallet. */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { TopUpBody, WalletSchema } from './model'
import type { WalletService } from './wallet'

export function usageConsole(deps: { auth: KernelHttp['console']; wallet: WalletService }) {
  return new Elysia({ prefix: '/workspaces/:ws/wallet', detail: { tags: ['Console'] } }).use(deps.auth).post('', ({ body, workspace }) => deps.wallet.topUp(workspace, body.creditMicro), {
    params: t.Object({ ws: t.String() }),
    workspace: true,
    body: TopUpBody,
    detail: {
      responses: answers({ 200: WalletSchema, ...consoleErrors(400, 404, 409) }),
      summary: "Credit a developer's wallet",
      description: '409 for a customer (billed to its developer) and on the Free plan (no wallet).',
    },
  })
}
