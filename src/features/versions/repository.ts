/**
 * Frozen agent versions (legacy surface), numbered per agent: version 1, 2, 3… of each agent, in
 * the order the publication chart accepted them. The legacy integer `id` of a version is its
 * number, so a version is addressed by agent id + number.
 */
import { type Collection, type CollectionSpec, type DocumentStore, DuplicateKeyError } from '../../store/port'
import { WorkspaceCollection } from '../../store/workspace-scoped'
import type { AgentSnapshot } from './snapshot'

/** docs/spec.md Versioning rule 3, in promotion order. */
export const ENVIRONMENTS = ['development', 'staging', 'production'] as const
export type Environment = (typeof ENVIRONMENTS)[number]

export interface VersionDoc {
  [field: string]: unknown
  /** `${agentId}:${number}`: the store id. The legacy integer `id` is `number`. */
  id: string
  agentId: string
  workspaceId: string
  number: number
  label: string
  /** The agent's name when frozen. */
  name: string
  environment: Environment
  /** publish: made live; checkpoint: stored on request; backup: saved by a rollback before it restored. */
  kind: 'publish' | 'checkpoint' | 'backup'
  /** The version live chat and voice are served (docs/spec.md `is_active`); at most one per agent. */
  isActive: boolean
  /** The API key id that asked for it. */
  createdBy: string
  changeSummary: string | null
  snapshot: AgentSnapshot
  createdAt: string
}

export const versionsSpec: CollectionSpec = {
  name: 'agent_versions',
  indexes: [
    {
      name: 'agent_number',
      fields: [
        ['agentId', 1],
        ['number', -1],
      ],
      unique: true,
    },
    {
      name: 'agent_active',
      fields: [
        ['agentId', 1],
        ['isActive', 1],
      ],
    },
  ],
}

export const versionKey = (agentId: string, number: number) => `${agentId}:${number}`

export class VersionStore {
  /** Keyed by agent: the writes below name an agent their caller already found in its workspace. */
  private readonly repo: Collection<VersionDoc>

  private constructor(private readonly scoped: WorkspaceCollection<VersionDoc>) {
    this.repo = scoped.acrossWorkspaces
  }

  static async open(store: DocumentStore): Promise<VersionStore> {
    return new VersionStore(new WorkspaceCollection(await store.collection<VersionDoc>(versionsSpec)))
  }

  /** Null when there is no such version in this workspace (another workspace's counts as none). */
  get(workspaceId: string, agentId: string, number: number): Promise<VersionDoc | null> {
    return this.scoped.in(workspaceId).get(versionKey(agentId, number))
  }

  /** Newest first. */
  list(agentId: string): Promise<VersionDoc[]> {
    return this.repo.find({ agentId }, { sort: [['number', -1]] })
  }

  /** The served version (the newest active one, should an interrupted go-live have left two). */
  async live(workspaceId: string, agentId: string): Promise<VersionDoc | null> {
    const [doc] = await this.scoped.in(workspaceId).find({ agentId, isActive: true }, { sort: [['number', -1]], limit: 1 })
    return doc ?? null
  }

  /** Writes a version unless it exists: a re-run effect keeps the first capture. */
  async insertOnce(doc: VersionDoc): Promise<void> {
    if (await this.repo.get(doc.id)) return
    try {
      await this.repo.insert(doc)
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err
    }
  }

  /** Makes `number` the served version: switched on first, then every other one off (see live()). */
  async activate(agentId: string, number: number): Promise<void> {
    const target = versionKey(agentId, number)
    if (!(await this.repo.update(target, { isActive: true }))) throw new Error(`version ${target} does not exist`)
    for (const other of await this.repo.find({ agentId, isActive: true })) {
      if (other.id !== target) await this.repo.update(other.id, { isActive: false })
    }
  }

  async deactivateAll(agentId: string): Promise<void> {
    for (const doc of await this.repo.find({ agentId, isActive: true })) await this.repo.update(doc.id, { isActive: false })
  }

  setEnvironment(agentId: string, number: number, environment: Environment): Promise<VersionDoc | null> {
    return this.repo.update(versionKey(agentId, number), { environment })
  }

  removeAllForAgent(agentId: string): Promise<number> {
    return this.repo.deleteMany({ agentId })
  }
}
