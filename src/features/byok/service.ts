/**
 * Bring-your-own-keys (docs/spec.md BYOK): a workspace keeps one verified key per job (`stt`, `llm`,
 * `tts`), each with the models its provider offered and the one chosen, and a switch. The rules:
 * - on only with all three keys added, verified and each with a model (409 otherwise);
 * - a key is verified against the provider before it is saved; a rejected key is not saved;
 * - keys are sealed at rest and shown by their last four characters only;
 * - removing a key while BYOK is on is refused (409);
 * - a customer uses its developer's set while the developer's BYOK is on, unless it switched on
 *   its own complete set; the developer switching off switches every customer off.
 */
import { type Clock, iso } from '../../clock'
import type { SecretBox } from '../../crypto/secrets'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { assertPublicHost, BlockedTargetError } from '../../net/address-guard'
import { type Credentials, JOB_PROVIDERS, JOBS, type Job, KeyRejected, offeredModels, type VendorEndpoints, VendorUnavailable } from '../../providers/catalog'
import { checkBaseUrl } from '../../providers/llm/transport'
import { clashes, invalid, isRefused, notThere, unavailable, upstreamFailed } from '../../refusals'
import type { WorkspaceRepo } from '../workspaces/public'
import type { ByokKeyDoc, ByokRepos } from './repository'

export type Using = 'own' | 'developer' | 'none'

export interface KeyView {
  provider: string
  /** The key's last four characters, e.g. `…9f3a`; null for a keyless OpenAI-compatible server. */
  key: string | null
  credentials: Record<string, string>
  models: string[]
  model: string | null
  verifiedAt: string
}

export interface ByokStatus {
  enabled: boolean
  using: Using
  stt: KeyView | null
  llm: KeyView | null
  tts: KeyView | null
}

export interface KeyInput {
  provider: string
  credentials: Credentials & { model?: string }
}

/** A job's key opened for use. */
export interface OpenKey {
  provider: string
  credentials: Credentials
  models: string[]
  model: string
}

export interface EffectiveKeys {
  using: Exclude<Using, 'none'>
  /** The workspace whose keys these are (the developer's, or the customer's own). */
  owner: string
  keys: Record<Job, OpenKey>
}

/** Model lists are shown whole; more than this many named in an error is noise. */
const NAMED_IN_ERRORS = 20

const view = (doc: ByokKeyDoc | null): KeyView | null =>
  doc && { provider: doc.provider, key: doc.last4 ? `…${doc.last4}` : null, credentials: doc.shown, models: doc.models, model: doc.model, verifiedAt: doc.verifiedAt }

const listed = (ids: string[]) => (ids.length ? ids.slice(0, NAMED_IN_ERRORS).join(', ') + (ids.length > NAMED_IN_ERRORS ? ', …' : '') : 'none')

export class ByokService {
  constructor(
    private readonly deps: {
      repos: ByokRepos
      workspaces: WorkspaceRepo
      secrets: SecretBox
      endpoints: VendorEndpoints
      /** ALLOW_PRIVATE_WEBHOOK_TARGETS: a base URL may be plain http to this machine or a private network (tests, self-hosting). */
      allowPrivate: boolean
      clock: Clock
    },
  ) {}

  private key(workspaceId: string, job: Job): Promise<ByokKeyDoc | null> {
    return this.deps.repos.keys.get(`${workspaceId}:${job}`)
  }

  private async enabled(workspaceId: string): Promise<boolean> {
    return (await this.deps.repos.switches.get(workspaceId))?.enabled === true
  }

  /** Whose keys a workspace runs on now. */
  async using(ws: WorkspaceDoc): Promise<{ using: Using; owner: string | null }> {
    const developer = ws.parentId ?? ws.id
    if (!(await this.enabled(developer))) return { using: 'none', owner: null }
    if (ws.kind !== 'customer') return { using: 'own', owner: ws.id }
    return (await this.enabled(ws.id)) ? { using: 'own', owner: ws.id } : { using: 'developer', owner: developer }
  }

  async status(ws: WorkspaceDoc): Promise<ByokStatus> {
    const [enabled, { using }, stt, llm, tts] = await Promise.all([this.enabled(ws.id), this.using(ws), this.key(ws.id, 'stt'), this.key(ws.id, 'llm'), this.key(ws.id, 'tts')])
    return { enabled, using, stt: view(stt), llm: view(llm), tts: view(tts) }
  }

  async setEnabled(ws: WorkspaceDoc, enabled: boolean): Promise<ByokStatus> {
    const now = iso(this.deps.clock.now())
    if (enabled) {
      const missing: string[] = []
      for (const job of JOBS) {
        const doc = await this.key(ws.id, job)
        if (!doc) missing.push(`${job} has no key`)
        else if (!doc.model) missing.push(`${job} has no model`)
      }
      if (missing.length) throw clashes(`BYOK cannot be switched on: ${missing.join('; ')} (all three of stt, llm and tts need a verified key and a model)`, { missing })
      if (ws.kind === 'customer' && !(await this.enabled(ws.parentId!))) {
        throw clashes("BYOK cannot be switched on in a customer while the developer's BYOK is off")
      }
    } else if (ws.kind !== 'customer') {
      // The developer switching off switches its customers off (docs/spec.md BYOK).
      for (const c of await this.deps.workspaces.find({ parentId: ws.id })) {
        if (await this.enabled(c.id)) await this.deps.repos.switches.upsert({ id: c.id, workspaceId: c.id, enabled: false, updatedAt: now })
      }
    }
    await this.deps.repos.switches.upsert({ id: ws.id, workspaceId: ws.id, enabled, updatedAt: now })
    return this.status(ws)
  }

  async putKey(ws: WorkspaceDoc, job: Job, input: KeyInput): Promise<ByokStatus> {
    const providers = JOB_PROVIDERS[job]
    if (!providers.includes(input.provider)) throw invalid('provider', `${input.provider} is not a ${job} provider; valid ids: ${providers.join(', ')}`)
    const { model: wanted, ...credentials } = input.credentials
    await this.checkCredentials(input.provider, credentials)
    const models = await this.verify(job, input.provider, credentials)
    const held = await this.key(ws.id, job)
    let model: string | null
    if (wanted !== undefined) {
      if (!models.includes(wanted)) throw invalid('credentials.model', `${input.provider} does not offer ${wanted} to this key; offered: ${listed(models)}`)
      model = wanted
    } else if (held?.provider === input.provider && held.model && models.includes(held.model))
      model = held.model // same provider keeps the model
    else model = models.length === 1 ? models[0]! : null // the one model offered (an Azure deployment) is the choice
    if (!model && (await this.enabled(ws.id))) throw clashes(`BYOK is on: the new ${job} key needs a model (credentials.model); offered: ${listed(models)}`)
    const now = iso(this.deps.clock.now())
    const shown: Record<string, string> = {}
    for (const field of ['baseUrl', 'endpoint', 'deployment', 'apiVersion'] as const) if (credentials[field]) shown[field] = credentials[field]!
    await this.deps.repos.keys.upsert({
      id: `${ws.id}:${job}`,
      workspaceId: ws.id,
      job,
      provider: input.provider,
      sealed: this.deps.secrets.seal(JSON.stringify(credentials)),
      last4: credentials.apiKey ? credentials.apiKey.slice(-4) : null,
      shown,
      models,
      model,
      verifiedAt: now,
      createdAt: held?.createdAt ?? now,
      updatedAt: now,
    })
    return this.status(ws)
  }

  async patchKey(ws: WorkspaceDoc, job: Job, input: { model?: string; refreshModels?: boolean }): Promise<ByokStatus> {
    if (input.model === undefined && !input.refreshModels) throw invalid('model', 'send a model, refreshModels: true, or both')
    const doc = await this.key(ws.id, job)
    if (!doc) throw notThere(`no ${job} key in this workspace; add one first (PUT /byok/keys/${job})`)
    let models = doc.models
    const set: Partial<ByokKeyDoc> = { updatedAt: iso(this.deps.clock.now()) }
    if (input.refreshModels) {
      try {
        models = await this.verify(job, doc.provider, this.open(doc))
      } catch (err) {
        if (isRefused(err, 'invalid')) throw clashes(`${doc.provider} no longer accepts the stored ${job} key: replace it (PUT /byok/keys/${job})`)
        throw err
      }
      set.models = models
      set.verifiedAt = set.updatedAt
    }
    if (input.model !== undefined) {
      if (!models.includes(input.model)) throw invalid('model', `${input.model} is not in this key's models: ${listed(models)}${input.refreshModels ? '' : ' (refreshModels: true reloads them)'}`)
      set.model = input.model
    }
    await this.deps.repos.keys.update(doc.id, set)
    return this.status(ws)
  }

  async removeKey(ws: WorkspaceDoc, job: Job): Promise<ByokStatus> {
    if (await this.enabled(ws.id)) throw clashes(`BYOK is on: switch it off before removing the ${job} key`)
    if (!(await this.deps.repos.keys.delete(`${ws.id}:${job}`))) throw notThere(`no ${job} key in this workspace`)
    return this.status(ws)
  }

  /** The keys a workspace's calls and replies run on; null when BYOK is not in use. */
  async effective(ws: WorkspaceDoc): Promise<EffectiveKeys | null> {
    const { using, owner } = await this.using(ws)
    if (using === 'none' || !owner) return null
    const keys = {} as Record<Job, OpenKey>
    for (const job of JOBS) {
      const doc = await this.key(owner, job)
      // Switched on with all three; a key missing now (erased with a customer) means no BYOK, not a fallback.
      if (!doc?.model) throw unavailable(`BYOK is on but the ${job} key is missing; add it again`, undefined, { provider: null })
      keys[job] = { provider: doc.provider, credentials: this.open(doc), models: doc.models, model: doc.model }
    }
    return { using, owner, keys }
  }

  private open(doc: ByokKeyDoc): Credentials {
    return JSON.parse(this.deps.secrets.open(doc.sealed)) as Credentials
  }

  /** The provider's own list for the key; a rejected key is invalid (nothing saved), an unreachable provider an upstream failure. */
  private async verify(job: Job, provider: string, credentials: Credentials): Promise<string[]> {
    try {
      return await offeredModels(job, provider, credentials, this.deps.endpoints)
    } catch (err) {
      if (err instanceof KeyRejected) throw invalid('credentials.apiKey', `${err.message}; the key was not saved`)
      if (err instanceof VendorUnavailable) throw upstreamFailed(`${err.message}; the key was not saved, try again`, { provider })
      throw err
    }
  }

  private async checkCredentials(provider: string, c: Credentials): Promise<void> {
    if (provider !== 'openai-compatible' && !c.apiKey) throw invalid('credentials.apiKey', `${provider} needs an API key`)
    if (provider === 'openai-compatible' && !c.baseUrl) throw invalid('credentials.baseUrl', 'an OpenAI-compatible server needs its https base URL (…/v1)')
    if (provider === 'azure') {
      if (!c.endpoint) throw invalid('credentials.endpoint', 'Azure OpenAI needs the resource endpoint (https://<resource>.openai.azure.com)')
      if (!c.deployment) throw invalid('credentials.deployment', 'Azure OpenAI needs the deployment name')
    }
    for (const field of ['baseUrl', 'endpoint'] as const) {
      if (provider !== 'openai-compatible' && provider !== 'azure' && c[field]) throw invalid(`credentials.${field}`, `${provider} takes no ${field}`)
      if (c[field]) await this.checkUrl(`credentials.${field}`, c[field]!)
    }
  }

  /** https to a public host; plain http or a private host only under ALLOW_PRIVATE_WEBHOOK_TARGETS. */
  private async checkUrl(field: string, raw: string): Promise<void> {
    let url: URL
    try {
      url = new URL(checkBaseUrl('byok', raw))
    } catch (err) {
      throw invalid(field, (err as Error).message)
    }
    if (this.deps.allowPrivate) return
    if (url.protocol !== 'https:') throw invalid(field, 'must be an https URL')
    try {
      await assertPublicHost(url.hostname)
    } catch (err) {
      if (err instanceof BlockedTargetError) throw invalid(field, "must not point inside the service's own network")
      throw invalid(field, `${url.hostname} does not resolve`)
    }
  }
}
