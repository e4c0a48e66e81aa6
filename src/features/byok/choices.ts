/**
 * What the developer's keys reach, for agents and people: the voices of the voice key (with the
 * provider's hosted clip as `sample`), a voice preview, and each agent's model and voice choice
 * among them. A choice is checked when made; one the key no longer reaches is kept and read back
 * with `stale: true` (and calls and replies use the key's own model meanwhile).
 */

import type { WorkspaceDoc } from '../../kernel/tenancy'
import { KeyRejected, type OfferedVoice, offeredVoices, previewVoice, type VendorEndpoints, VendorUnavailable } from '../../providers/catalog'
import { isRealtimeModel, REALTIME_VOICES, type RealtimeTurnDetection } from '../../providers/realtime/openai'
import { clashes, invalid, upstreamFailed } from '../../refusals'
import type { ByokRepos } from './repository'
import type { ByokService, EffectiveKeys } from './service'

export interface AgentChoice {
  agent: string
  model: string | null
  voice: string | null
  stale: { model: boolean; voice: boolean }
  turnDetection?: RealtimeTurnDetection
}

/** An OpenAI llm key that reaches a Realtime model speaks with these voices too. */
const realtimeKey = ({ keys }: EffectiveKeys) => keys.llm.provider === 'openai' && keys.llm.models.some(isRealtimeModel)
const isRealtimeVoice = (voice: string) => (REALTIME_VOICES as readonly string[]).includes(voice)

/** The voice key's voices, then the Realtime models' (`realtime: true`) where the llm key reaches one. */
function withRealtime(keys: EffectiveKeys, voices: OfferedVoice[]): OfferedVoice[] {
  if (!realtimeKey(keys)) return voices
  const listed = voices.map((v) => (isRealtimeVoice(v.id) && keys.keys.tts.provider === 'openai' ? { ...v, realtime: true } : v))
  const more = REALTIME_VOICES.filter((id) => !listed.some((v) => v.id === id && v.realtime)).map((id) => ({ id, name: id[0]!.toUpperCase() + id.slice(1), sample: null, realtime: true }))
  return [...listed, ...more]
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
    const keys = await this.inUse(ws)
    return withRealtime(keys, await this.offered(keys))
  }

  /** Whether the workspace's voice key offers `voice` (a call's `overrides.voice`); null while BYOK is off for it. */
  async offersVoice(ws: WorkspaceDoc, voice: string): Promise<boolean | null> {
    const keys = await this.deps.byok.effective(ws)
    return keys ? withRealtime(keys, await this.offered(keys)).some((v) => v.id === voice) : null
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
    const spoken = keys && voice !== null && isRealtimeVoice(voice) && isRealtimeModel(await this.modelFor(ws, agentId, keys))
    const voiceStale = voice !== null && !spoken && (!keys || !(await this.voicesOrNull(keys))?.some((v) => v.id === voice))
    const turn = doc?.turnDetection ? { turnDetection: doc.turnDetection } : {}
    return { agent: agentId, model, voice, stale: { model: model !== null && !keys?.keys.llm.models.includes(model), voice: voiceStale }, ...turn }
  }

  /** `null` reverts a choice; a value must be one the key reaches (or lists). */
  async set(ws: WorkspaceDoc, agentId: string, input: { model?: string | null; voice?: string | null; turnDetection?: RealtimeTurnDetection | null }): Promise<AgentChoice> {
    const keys = await this.inUse(ws)
    if (input.model) {
      if (!keys.keys.llm.models.includes(input.model))
        throw invalid('model', `${input.model} is not reached by the ${keys.keys.llm.provider} key; its models: ${keys.keys.llm.models.slice(0, 20).join(', ')}`)
    }
    const held = await this.deps.repos.choices.get(`${ws.id}:${agentId}`)
    if (input.voice) {
      // A Realtime model speaks in its own voices; any other model in the voice key's.
      const model = input.model !== undefined ? input.model : (held?.model ?? null)
      const realtime = model !== null && isRealtimeModel(model) && keys.keys.llm.models.includes(model)
      const offered = realtime ? REALTIME_VOICES.map((id) => ({ id })) : await this.offered(keys)
      const whose = realtime ? `the Realtime model ${model}` : `the ${keys.keys.tts.provider} key`
      if (!offered.some((v) => v.id === input.voice)) throw invalid('voice', `${input.voice} is not a voice of ${whose} (GET /byok/voices lists them)`)
    }
    await this.deps.repos.choices.upsert({
      id: `${ws.id}:${agentId}`,
      workspaceId: ws.id,
      agentId,
      model: input.model !== undefined ? input.model : (held?.model ?? null),
      voice: input.voice !== undefined ? input.voice : (held?.voice ?? null),
      turnDetection: input.turnDetection !== undefined ? input.turnDetection : (held?.turnDetection ?? null),
    })
    return this.get(ws, agentId)
  }

  /** The agent's model on the keys: its choice while the key still offers it, else the key's model. */
  async modelFor(ws: WorkspaceDoc, agentId: string, keys: EffectiveKeys): Promise<string> {
    const doc = await this.deps.repos.choices.get(`${ws.id}:${agentId}`)
    return doc?.model && keys.keys.llm.models.includes(doc.model) ? doc.model : keys.keys.llm.model
  }

  /** A Realtime agent's voice (its choice when a Realtime voice, else marin, which OpenAI recommends) and turn detection. */
  async realtimeFor(ws: WorkspaceDoc, agentId: string): Promise<{ voice: string; turnDetection: RealtimeTurnDetection }> {
    const doc = await this.deps.repos.choices.get(`${ws.id}:${agentId}`)
    return { voice: doc?.voice && isRealtimeVoice(doc.voice) ? doc.voice : 'marin', turnDetection: doc?.turnDetection ?? 'server_vad' }
  }

  async voiceFor(ws: WorkspaceDoc, agentId: string): Promise<string | null> {
    return (await this.deps.repos.choices.get(`${ws.id}:${agentId}`))?.voice ?? null
  }

  private voicesOrNull(keys: EffectiveKeys): Promise<OfferedVoice[] | null> {
    return offeredVoices(keys.keys.tts.provider, keys.keys.tts.credentials, this.deps.endpoints).catch(() => null)
  }
}
