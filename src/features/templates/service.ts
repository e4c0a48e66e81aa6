/**
 * Templates and forms: created in the console, listed in v1, and resolved for a reply (which
 * template a `{ name, language? }` means on a number, which form a name means for an agent).
 */
import { type Clock, iso } from '../../clock'
import { newId } from '../../ids'
import { clashes, invalid, notThere } from '../../refusals'
import type { PageAfter } from '../../store/port'
import { DuplicateKeyError } from '../../store/port'
import type { WorkspaceCollection } from '../../store/workspace-scoped'
import type { FormDoc, TemplateDoc } from './repository'

export interface NewTemplate {
  name: string
  language: string
  category: TemplateDoc['category']
  body: string
  status?: TemplateDoc['status']
  agentId?: string | null
  number?: string | null
  variableCount?: number
  variableLabels?: TemplateDoc['variableLabels']
  buttonVariableCount?: number
  headerKind?: TemplateDoc['headerKind']
}

/** What a template or form may name, checked against the workspace's agents and chat-app numbers. */
export interface TemplateRefs {
  agentExists(workspaceId: string, id: string): Promise<boolean>
  /** The number when the workspace holds it. */
  number(workspaceId: string, number: string): Promise<{ channel: string } | null>
}

/** `{{1}}`, `{{2}}`…: the placeholders a send fills in order. */
export function placeholders(body: string): number {
  const seen = new Set([...body.matchAll(/\{\{\s*(\d+)\s*\}\}/g)].map((m) => Number(m[1])))
  for (let i = 1; i <= seen.size; i++) if (!seen.has(i)) throw invalid('body', `placeholders must be {{1}} to {{${seen.size}}} with none missing`)
  return seen.size
}

export const presentTemplate = (t: TemplateDoc) => ({
  id: t.id,
  name: t.name,
  language: t.language,
  category: t.category,
  status: t.status,
  agent: t.agentId,
  number: t.number,
  body: t.body,
  variableCount: t.variableCount,
  variableLabels: t.variableLabels,
  buttonVariableCount: t.buttonVariableCount,
  headerKind: t.headerKind,
  reason: t.reason ?? null,
  createdAt: t.createdAt,
})

export const presentForm = (f: FormDoc) => ({ id: f.id, name: f.name, agent: f.agentId, published: f.published, createdAt: f.createdAt })

export class TemplateService {
  constructor(
    private readonly templates: WorkspaceCollection<TemplateDoc>,
    private readonly forms: WorkspaceCollection<FormDoc>,
    private readonly clock: Clock,
    private readonly refs: TemplateRefs,
  ) {}

  /** 400 naming `agent` or `number` when they are not this workspace's (a chat-app number for `number`). */
  async create(workspaceId: string, input: NewTemplate): Promise<TemplateDoc> {
    if (input.agentId !== undefined && input.agentId !== null) await this.checkAgent(workspaceId, input.agentId)
    if (input.number !== undefined && input.number !== null) {
      const n = await this.refs.number(workspaceId, input.number)
      if (n?.channel !== 'chatapp') throw invalid('number', `${input.number} is not a chat-app number of this workspace`)
    }
    const count = placeholders(input.body)
    if (input.variableCount !== undefined && input.variableCount !== count) throw invalid('variableCount', `the body has ${count} placeholders`)
    const doc: TemplateDoc = {
      id: newId('tpl'),
      workspaceId,
      number: input.number ?? null,
      name: input.name,
      language: input.language,
      category: input.category,
      status: input.status ?? 'approved',
      agentId: input.agentId ?? null,
      body: input.body,
      variableCount: count,
      variableLabels: input.variableLabels ?? [],
      buttonVariableCount: input.buttonVariableCount ?? 0,
      headerKind: input.headerKind ?? 'none',
      reason: null,
      createdAt: iso(this.clock.now()),
    }
    const templates = this.templates.in(workspaceId)
    if (await templates.findOne({ name: doc.name, language: doc.language, number: doc.number })) throw clashes(`a template ${doc.name} in ${doc.language} exists already for that number`)
    await templates.insert(doc)
    return doc
  }

  page(workspaceId: string, filter: { status?: string; category?: string }, limit: number, after: PageAfter | null): Promise<TemplateDoc[]> {
    return this.templates.in(workspaceId).page({ ...(filter.status ? { status: filter.status } : {}), ...(filter.category ? { category: filter.category } : {}) }, limit, after)
  }

  /**
   * The template a reply names on `number`: 404 when no template has that name (in that language),
   * 409 when it exists but is not approved, or only for another number. Without a language, the
   * oldest approved one (docs/spec.md).
   */
  async forReply(workspaceId: string, number: string, name: string, language: string | undefined): Promise<TemplateDoc> {
    const named = (await this.templates.in(workspaceId).find({ name }, { sort: [['createdAt', 1]] })).filter((t) => language === undefined || t.language === language)
    if (!named.length) throw notThere(`no template named "${name}"${language ? ` in ${language}` : ''}`)
    const here = named.filter((t) => t.number === null || t.number === number)
    if (!here.length) throw clashes(`template "${name}" is for another number, not ${number}`)
    const approved = here.find((t) => t.status === 'approved')
    if (!approved) throw clashes(`template "${name}" is ${here[0]!.status}, not approved`)
    return approved
  }

  async createForm(workspaceId: string, input: { name: string; agentId: string; published?: boolean }): Promise<FormDoc> {
    await this.checkAgent(workspaceId, input.agentId)
    const doc: FormDoc = { id: newId('form'), workspaceId, name: input.name, agentId: input.agentId, published: input.published ?? true, createdAt: iso(this.clock.now()) }
    try {
      await this.forms.in(workspaceId).insert(doc)
    } catch (err) {
      if (err instanceof DuplicateKeyError) throw clashes(`a form named ${input.name} exists already`)
      throw err
    }
    return doc
  }

  private async checkAgent(workspaceId: string, id: string): Promise<void> {
    if (!(await this.refs.agentExists(workspaceId, id))) throw invalid('agent', `no agent ${id} in this workspace`)
  }

  /** The form a reply names for the number's agent: 404 none, 400 unpublished or another agent's. */
  async formForReply(workspaceId: string, name: string, agentId: string | null): Promise<FormDoc> {
    const form = await this.forms.in(workspaceId).findOne({ name })
    if (!form) throw notThere(`no form named "${name}"`)
    if (!form.published) throw invalid('form', `form "${name}" is not published`)
    if (form.agentId !== agentId) throw invalid('form', `form "${name}" belongs to another agent than the number's`)
    return form
  }
}
