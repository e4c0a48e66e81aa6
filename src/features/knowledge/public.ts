/** What other features may use of knowledge: its ref (for `use`), types and helpers; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { KnowledgeService } from './service'

export interface KnowledgeServices {
  knowledge: KnowledgeService
}

export const knowledgeRef = featureRef<KnowledgeServices>('knowledge')

export { KnowledgeDocumentResponse, KnowledgeError, type KnowledgeSearch, toDocumentResponse } from './model'
export { SEARCHES } from './repository'
export type { KnowledgeService, SearchOutcome } from './service'
