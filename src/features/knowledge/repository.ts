/**
 * Knowledge persistence over the document-store port: documents, their passages, and the
 * search log analytics reads. Every query goes through the workspace's view and names the agent,
 * so an id from another workspace is simply not found.
 */
import type { CollectionSpec, DocumentStore, PageAfter } from '../../store/port'
import { WorkspaceCollection } from '../../store/workspace-scoped'
import type { KnowledgeDocument, KnowledgeSearch, Passage } from './model'

export const DOCUMENTS: CollectionSpec = {
  name: 'knowledge_documents',
  indexes: [
    // The agent's list, newest first (the port's page order is createdAt desc, id desc).
    {
      name: 'by_agent_created',
      fields: [
        ['workspaceId', 1],
        ['agentId', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
  ],
}

export const PASSAGES: CollectionSpec = {
  name: 'knowledge_passages',
  indexes: [
    // Loading an agent's index, and the agent-delete cascade.
    {
      name: 'by_agent',
      fields: [
        ['workspaceId', 1],
        ['agentId', 1],
        ['documentId', 1],
        ['position', 1],
      ],
    },
    // Deleting one document's passages.
    { name: 'by_document', fields: [['documentId', 1]] },
  ],
}

export const SEARCHES: CollectionSpec = {
  name: 'knowledge_searches',
  indexes: [
    // Analytics windows (`days`) per agent, grouped by queryKey or found.
    {
      name: 'by_agent_created',
      fields: [
        ['workspaceId', 1],
        ['agentId', 1],
        ['createdAt', -1],
      ],
    },
    // Analytics reads the newest wording of each listed question: one seek per row.
    {
      name: 'by_agent_question',
      fields: [
        ['workspaceId', 1],
        ['agentId', 1],
        ['queryKey', 1],
        ['createdAt', -1],
      ],
    },
  ],
}

type Scope = { workspaceId: string; agentId: string }

export class KnowledgeRepository {
  private constructor(
    private readonly documents: WorkspaceCollection<KnowledgeDocument>,
    private readonly passages: WorkspaceCollection<Passage>,
    private readonly searches: WorkspaceCollection<KnowledgeSearch>,
  ) {}

  static async open(store: DocumentStore): Promise<KnowledgeRepository> {
    const [documents, passages, searches] = [await store.collection<KnowledgeDocument>(DOCUMENTS), await store.collection<Passage>(PASSAGES), await store.collection<KnowledgeSearch>(SEARCHES)]
    return new KnowledgeRepository(new WorkspaceCollection(documents), new WorkspaceCollection(passages), new WorkspaceCollection(searches))
  }

  /**
   * Stores a document with its passages (the port has no transactions). Passages go first: if
   * the process dies half-way, the list shows no document rather than a `ready` one whose
   * passages are missing. Such leftover passages are never searched (the index only loads
   * passages of listed documents) and go with their agent.
   */
  async insertDocument(doc: KnowledgeDocument, passages: Passage[]): Promise<void> {
    const passagesIn = this.passages.in(doc.workspaceId)
    for (const p of passages) await passagesIn.insert(p)
    await this.documents.in(doc.workspaceId).insert(doc)
  }

  async getDocument(scope: Scope, documentId: string): Promise<KnowledgeDocument | null> {
    return this.documents.in(scope.workspaceId).findOne({ id: documentId, agentId: scope.agentId })
  }

  /** A page of the agent's documents, newest first (the store's page order). */
  pageDocuments(scope: Scope, limit: number, after: PageAfter | null): Promise<KnowledgeDocument[]> {
    return this.documents.in(scope.workspaceId).page({ agentId: scope.agentId }, limit, after)
  }

  /** Deletes passages first, so a half-done delete never leaves a listed document without text. */
  async deleteDocument(scope: Scope, documentId: string): Promise<number> {
    const removed = await this.passages.in(scope.workspaceId).deleteMany({ documentId, agentId: scope.agentId })
    await this.documents.in(scope.workspaceId).delete(documentId)
    return removed
  }

  async documentIdsOf(scope: Scope): Promise<Set<string>> {
    return new Set((await this.documents.in(scope.workspaceId).find({ agentId: scope.agentId })).map((d) => d.id))
  }

  async passagesOf(scope: Scope): Promise<Passage[]> {
    return this.passages.in(scope.workspaceId).find(
      { agentId: scope.agentId },
      {
        sort: [
          ['documentId', 1],
          ['position', 1],
        ],
      },
    )
  }

  /** Agent delete cascade: documents, passages and the search log. */
  async deleteAgent(scope: Scope): Promise<void> {
    const agent = { agentId: scope.agentId }
    await this.passages.in(scope.workspaceId).deleteMany(agent)
    await this.documents.in(scope.workspaceId).deleteMany(agent)
    await this.searches.in(scope.workspaceId).deleteMany(agent)
  }

  async logSearch(entry: KnowledgeSearch): Promise<void> {
    await this.searches.in(entry.workspaceId).insert(entry)
  }

  async searchesOf(scope: Scope, sinceIso: string): Promise<KnowledgeSearch[]> {
    return this.searches.in(scope.workspaceId).find({ agentId: scope.agentId, createdAt: { $gte: sinceIso } }, { sort: [['createdAt', -1]] })
  }
}
