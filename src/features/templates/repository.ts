/** Message templates and forms as stored (docs/spec.md Template; forms are the console's `{ name, agent, published }`). */
import type { CollectionSpec, DocumentStore } from '../../store/port'
import { WorkspaceCollection, workspaceSpec } from '../../store/workspace-scoped'

export const TEMPLATE_CATEGORIES = ['utility', 'marketing', 'authentication'] as const
export const TEMPLATE_STATUSES = ['draft', 'pending', 'approved', 'rejected', 'paused'] as const
export const HEADER_KINDS = ['none', 'text', 'image', 'video', 'document'] as const

export interface TemplateDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  /** The chat-app number it is approved on; null: every chat-app number of the workspace. */
  number: string | null
  name: string
  language: string
  category: (typeof TEMPLATE_CATEGORIES)[number]
  status: (typeof TEMPLATE_STATUSES)[number]
  agentId: string | null
  body: string
  variableCount: number
  variableLabels: { position: number; sample: string }[]
  buttonVariableCount: number
  headerKind: (typeof HEADER_KINDS)[number]
  /** Why it was rejected or paused in review (review.ts); null otherwise. */
  reason?: string | null
  createdAt: string
}

export interface FormDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  name: string
  agentId: string
  published: boolean
  createdAt: string
}

// GET /templates newest first (status and category filters walk workspace_created), and a name's languages.
export const templatesSpec: CollectionSpec = workspaceSpec('templates', [
  {
    name: 'workspace_name',
    fields: [
      ['workspaceId', 1],
      ['name', 1],
      ['createdAt', 1],
    ],
  },
])

export const formsSpec: CollectionSpec = {
  name: 'forms',
  indexes: [
    {
      name: 'workspace_name',
      fields: [
        ['workspaceId', 1],
        ['name', 1],
      ],
      unique: true,
    },
  ],
}

export const openTemplates = async (store: DocumentStore): Promise<WorkspaceCollection<TemplateDoc>> => new WorkspaceCollection(await store.collection<TemplateDoc>(templatesSpec))
export const openForms = async (store: DocumentStore): Promise<WorkspaceCollection<FormDoc>> => new WorkspaceCollection(await store.collection<FormDoc>(formsSpec))
