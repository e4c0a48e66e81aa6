/**
 * What the developer's keys reach, for agents and people: the voices of the voice key (with the
 * provider's hosted clip as `sample`), a voice preview, and each agent's model and voice choice
 * among them. A choice is checked when made; one the key no longer reaches is kept and read back
 * with `stale: true` (and calls and replies use the key's own model meanwhile).
 */

import type { WorkspaceDoc } from '../../kernel/tenancy'
import { KeyRejected, type OfferedVoice, offeredVoices, previewVoice, type VendorEndpoints, VendorUnavailable } from '../../providers/catalog'
import { clashes, invalid, upstreamFailed } from '../../refusals'
import type { ByokRepos } from './repository'
import type { ByokService, EffectiveKeys } from './service'

export interface AgentChoice {
  agent: string
  model: string | null
  voice: string | null
  stale: { model: boolean; voice: boolean }
}

const vendorError = (err: unknown): unknown => {
  if (err instanceof KeyRejected) return clashes(`${err.message}: replace the key (PUT /byok/keys/tts)`)
  if (err instanceof VendorUnavailable) return upstreamFailed(err.message, { provider: err.provider })
  return err
}

export class ByokChoices {
  constructor(private readonly deps: { byok: ByokService; repos: ByokRepos; endpoints: VendorEndpoints }) {}

  private async inUse(ws: WorkspaceDoc): Promise<EffectiveKeys> {
    const keys = await this.deps.byok.effective(ws)
    if (!keys) throw clashes('BYOK is off for this workspace: switch it on first (PATCH /byok { enabled: true })')
    return keys
  }

  async voices(ws: WorkspaceDoc): Promise<OfferedVoice[]> {
    return this.offered(await this.inUse(ws))
  }

  /** Whether the workspace's voice key offers `voice` (a call's `overrides.voice`); null while BYOK is off for it. */
  async offersVoice(ws: WorkspaceDoc, voice: string): Promise<boolean | null> {
    const keys = await this.deps.byok.effective(ws)
    return keys ? (await this.offered(keys)).some((v) => v.id === voice) : null
  }

  private offered({ keys }: EffectiveKeys): Promise<OfferedVoice[]> {
    return offeredVoices(keys.tts.provider, keys.tts.credentials, this.deps.endpoints).catch((err) => {
      throw vendorError(err)
    })
  }

  async preview(ws: WorkspaceDoc, voice: string, text: string): Promise<{ contentType: string; audio: ArrayBuffer }> {
    const { keys } = await this.inUse(ws)
    const offered = await this.voices(ws)
    if (!offered.some((v) => v.id === voice)) throw invalid('voice', `${voice} is not a voice of this ${keys.tts.provider} key (GET /byok/voices lists them)`)
    return previewVoice(keys.tts.provider, keys.tts.credentials, this.deps.endpoints, voice, text, keys.tts.model).catch((err) => {
      throw vendorError(err)
    })
  }

  async get(ws: WorkspaceDoc, agentId: string): Promise<AgentChoice> {
    const doc = await this.deps.repos.choices.get(`${ws.id}:${agentId}`)
    const keys = await this.deps.byok.effective(ws).catch(() => null)
    const model = doc?.model ?? null
    const voice = doc?.voice ?? null
    const voiceStale = voice !== null && (!keys || !(await this.voicesOrNull(keys))?.some((v) => v.id === voice))
    return { agent: agentId, model, voice, stale: { model: model !== null && !keys?.keys.llm.models.includes(model), voice: voiceStale } }
  }

  /** `null` reverts a choice; a value must be one the key reaches (or lists). */
  async set(ws: WorkspaceDoc, agentId: string, input: { model?: string | null; voice?: string | null }): Promise<AgentChoice> {
    const keys = await this.inUse(ws)
    if (input.model) {
      if (!keys.keys.llm.models.includes(input.model))
        throw invalid('model', `${input.model} is not reached by the ${keys.keys.llm.provider} key; its models: ${keys.keys.llm.models.slice(0, 20).join(', ')}`)
    }
    if (input.voice) {
      const offered = await this.voices(ws)
      if (!offered.some((v) => v.id === input.voice)) throw invalid('voice', `${input.voice} is not a voice of the ${keys.keys.tts.provider} key (GET /byok/voices lists them)`)
    }
    const held = await this.deps.repos.choices.get(`${ws.id}:${agentId}`)
    await this.deps.repos.choices.upsert({
      id: `${ws.id}:${agentId}`,
      workspaceId: ws.id,
      agentId,
      model: input.model !== undefined ? input.model : (held?.model ?? null),
      voice: input.voice !== undefined ? input.voice : (held?.voice ?? null),
    })
    return this.get(ws, agentId)
  }

  /** The agent's model on the keys: its choice while the key still offers it, else the key's model. */
  async modelFor(ws: WorkspaceDoc, agentId: string, keys: EffectiveKeys): Promise<string> {
    const doc = await this.deps.repos.choices.get(`${ws.id}:${agentId}`)
    return doc?.model && keys.keys.llm.models.includes(doc.model) ? doc.model : keys.keys.llm.model
  }

  async voiceFor(ws: WorkspaceDoc, agentId: string): Promise<string | null> {
    return (await this.deps.repos.choices.get(`${ws.id}:${agentId}`))?.voice ?? null
  }

  private voicesOrNull(keys: EffectiveKeys): Promise<OfferedVoice[] | null> {
    return offeredVoices(keys.keys.tts.provider, keys.keys.tts.credentials, this.deps.endpoints).catch(() => null)
  }
}
