/**
 * Bring-your-own-keys: a workspace's own speech-to-text, LLM and voice keys, verified with the
 * provider, sealed at rest, and what calls and replies run on while switched on.
 */
import { randomBytes } from 'node:crypto'
import { SecretBox } from '../../crypto/secrets'
import { defineFeature, eraseCollections } from '../../kernel/feature'
import type { VendorEndpoints } from '../../providers/catalog'
import { agentsRef } from '../agents/public'
import { notificationsRef } from '../notifications/public'
import { tenancyRef } from '../workspaces/public'
import { ByokChoices } from './choices'
import { byokRef } from './public'
import { byokChoicesSpec, byokKeysSpec, byokSwitchesSpec, openByok } from './repository'
import { ByokRuntime } from './runtime'
import { ByokService } from './service'
import { byokV1 } from './v1'

export const byokFeature = defineFeature(byokRef, {
  async build(kernel, use) {
    const { workspaceRepo } = use(tenancyRef)
    const { agents } = use(agentsRef)
    const { config, store, clock } = kernel
    const p = config.providers
    const endpoints: VendorEndpoints = {
      openaiBaseUrl: p.openaiBaseUrl,
      anthropicBaseUrl: p.anthropicBaseUrl,
      deepgramBaseUrl: p.deepgramBaseUrl,
      elevenlabsBaseUrl: p.elevenlabsBaseUrl,
      cartesiaBaseUrl: p.cartesiaBaseUrl,
      assemblyaiBaseUrl: p.assemblyaiBaseUrl,
    }
    const repos = await openByok(store)
    // SECRET_KEY is always set by the server (persisted in DATA_DIR when not given); a bare
    // buildServices (some tests) gets a key for this process only.
    const secrets = new SecretBox(config.secretKey ?? randomBytes(32).toString('hex'))
    const byok = new ByokService({ repos, workspaces: workspaceRepo, secrets, endpoints, allowPrivate: config.allowPrivateWebhookTargets, clock })
    const choices = new ByokChoices({ byok, repos, endpoints })
    const { notifications } = use(notificationsRef)
    const runtime = new ByokRuntime({ byok, choices, endpoints, notifications, clock })
    agents.onDelete((agent) => repos.choices.delete(`${agent.workspaceId}:${agent.id}`).then(() => {}))
    kernel.customerHooks.onErased(eraseCollections(store, [byokKeysSpec, byokSwitchesSpec, byokChoicesSpec]), 'BYOK keys erased')
    return {
      services: { byok, runtime },
      v1: [byokV1({ context: kernel.http.v1, byok, choices, agents })],
    }
  },
})
