/** POST /console/workspaces/{ws}/wallet (DESIGN.md console table): credit the developer's wallet. */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import { conflict } from '../../http/errors'
import { PLANS } from '../../catalog/plans'
import type { KernelHttp } from '../../kernel/feature'
import type { WorkspaceService } from '../workspaces'
import { TopUpBody, WalletSchema } from './model'
import type { WalletService } from './wallet'

export function usageConsole(deps: { auth: KernelHttp['console']; workspaces: WorkspaceService; wallet: WalletService }) {
  return new Elysia({ prefix: '/workspaces/:ws/wallet', detail: { tags: ['Console'] } })
    .use(deps.auth)
    .post(
      '',
      async ({ params, body }) => {
        const ws = await deps.workspaces.get(params.ws)
        if (ws.kind === 'customer') throw conflict(`customer ${ws.id} is billed to its developer ${ws.parentId}; credit the developer's wallet`)
        if (!PLANS[ws.plan].wallet) throw conflict(`the ${ws.plan} plan has no wallet; change the plan first`)
        return deps.wallet.topUp(ws, body.creditMicro)
      },
      {
        params: t.Object({ ws: t.String() }),
        body: TopUpBody,
        detail: {
          responses: answers({ 200: WalletSchema, ...consoleErrors(400, 404, 409) }),
          summary: "Credit a developer's wallet",
          description: '409 for a customer (billed to its developer) and on the Free plan (no wallet).',
        },
      },
    )
}
