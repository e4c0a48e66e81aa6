/**
 * The knowledge rules: add pasted text or a web page to an agent, list and delete documents,
 * search an agent's passages (logging each search for analytics). No Elysia types here; the
 * routes validate with model.ts schemas and map KnowledgeError to HTTP. Callers have already
 * checked that the agent belongs to the workspace, and pass a way to ask again (AgentExists).
 */

import { type Clock, iso } from '../../clock'
import { pageOf } from '../../http/pagination'
import { newId } from '../../ids'
import { BlockedTargetError, FetchFailedError, safeFetch } from '../../net/safe-fetch'
import type { DocumentStore, PageAfter } from '../../store/port'
import { chunkText } from './chunking'
import { type KnowledgeDocument, KnowledgeError, type KnowledgeSearch, MAX_TEXT_CHARS, MAX_TITLE_CHARS, MAX_URL_CHARS, type Passage } from './model'
import { pageText } from './page-text'
import { KnowledgeRepository } from './repository'
import { FOUND_SIMILARITY, IndexCache, PassageIndex, type SearchHit } from './search-index'

/** The request waits for the page (docs/spec.md), so this stays well inside common 30 s client
 * timeouts while giving slow sites a fair chance. */
export const PAGE_FETCH_TIMEOUT_MS = 10_000
/** Pages beyond 5 MiB of HTML are almost all inline scripts and data; we read the first 5 MiB. */
export const PAGE_MAX_BYTES = 5 * 1024 * 1024
/** A search returns at most this many passages: more than a prompt should carry. */
export const MAX_SEARCH_RESULTS = 20
/** Questions are sentences; a pasted essay as a query would only slow matching and bloat logs. */
export const MAX_QUERY_CHARS = 500
/**
 * Indexes kept in memory, bounded by the text they hold, because agents and their documents
 * are unbounded in number. bench/knowledge.ts measures ~14 bytes of heap per character indexed,
 * so 5 M characters ≈ 70 MB: 25 agents at the 200,000-character pasted-text limit, or hundreds
 * of typical ones. A miss only reloads passages from the store and re-indexes them (35–60 ms per
 * 200,000 characters on the bench), cheap next to the model call a search feeds.
 */
export const MAX_CACHED_CHARS = 5_000_000
/** Also bounded by count: each index has fixed overhead, and many tiny agents add up. */
export const MAX_CACHED_AGENTS = 500
/** A derived title is one list row. */
const DERIVED_TITLE_CHARS = 80

const USER_AGENT = 'AgentPlatformKnowledgeBot/0.1 (reads pages customers add to their agents)'

export interface KnowledgeServiceOptions {
  /** Lets pages on private addresses be fetched (tests with loopback fakes). */
  allowPrivate?: boolean
  fetchTimeoutMs?: number
  maxPageBytes?: number
  maxCachedChars?: number
  maxCachedAgents?: number
}

export interface SearchOutcome {
  query: string
  found: boolean
  bestSimilarity: number
  hits: SearchHit[]
}

export type Scope = { workspaceId: string; agentId: string }

/**
 * Asked after an add has stored its document: false when the agent has been deleted, or its
 * delete has begun, meanwhile (a page fetch can take 10 s). AgentService marks an agent as
 * deleting before any cascade runs, so either this add stored before our cascade (which takes its
 * document) or it asks after the mark and backs out. The route passes it; the service stays free
 * of agents and HTTP.
 */
export type AgentExists = () => Promise<boolean>

/** Told after an agent's passages changed (sync.ts tells the other instances). */
export type KnowledgeChangeListener = (scope: Scope) => Promise<void>

export class KnowledgeService {
  private readonly indexes: IndexCache
  private readonly changeListeners: KnowledgeChangeListener[] = []

  constructor(
    private readonly repo: KnowledgeRepository,
    private readonly clock: Clock,
    private readonly options: KnowledgeServiceOptions = {},
  ) {
    this.indexes = new IndexCache(options.maxCachedChars ?? MAX_CACHED_CHARS, options.maxCachedAgents ?? MAX_CACHED_AGENTS)
  }

  static async open(store: DocumentStore, clock: Clock, options?: KnowledgeServiceOptions): Promise<KnowledgeService> {
    return new KnowledgeService(await KnowledgeRepository.open(store), clock, options)
  }

  /**
   * docs/spec.md: a document is either `{ url }` or `{ text, title? }`. Refuses both or neither, and a
   * title with a URL (a page's title is read from the page), then adds the one given.
   */
  async add(input: Scope & { url?: string; text?: string; title?: string }, agentExists?: AgentExists): Promise<KnowledgeDocument> {
    const hasUrl = input.url !== undefined
    const hasText = input.text !== undefined
    if (hasUrl === hasText) throw new KnowledgeError(`${hasUrl ? 'url' : 'text'} send either url or text, not both and not neither`, 400, hasUrl ? 'url' : 'text')
    if (hasUrl && input.title !== undefined) throw new KnowledgeError('title goes with text only; a page’s title is read from the page', 400, 'title')
    const scope = { workspaceId: input.workspaceId, agentId: input.agentId }
    return hasUrl ? this.addUrl({ ...scope, url: input.url! }, agentExists) : this.addText({ ...scope, text: input.text!, title: input.title }, agentExists)
  }

  /** `agentExists` is asked once the document is stored (see AgentExists). */
  async addText(input: Scope & { text: string; title?: string }, agentExists?: AgentExists): Promise<KnowledgeDocument> {
    const text = typeof input.text === 'string' ? input.text : ''
    if (!text.trim()) throw new KnowledgeError('text must not be empty', 400, 'text')
    if (text.length > MAX_TEXT_CHARS) {
      throw new KnowledgeError(`text is ${text.length.toLocaleString('en')} characters; the limit is ${MAX_TEXT_CHARS.toLocaleString('en')}`, 400, 'text')
    }
    const title = input.title?.trim()
    if (title && title.length > MAX_TITLE_CHARS) {
      throw new KnowledgeError(`title is longer than ${MAX_TITLE_CHARS} characters`, 400, 'title')
    }
    return this.store(input, agentExists, { title: title || deriveTitle(text), type: 'text', source: 'pasted' }, text)
  }

  /** Fetches the page before answering; a page that cannot be read is kept as `failed`. */
  async addUrl(input: Scope & { url: string }, agentExists?: AgentExists): Promise<KnowledgeDocument> {
    const url = checkUrl(input.url)
    const base = { type: 'url' as const, source: input.url.trim() }
    let outcome: { title: string | null; text: string } | { error: string }
    try {
      const page = await safeFetch(url.toString(), {
        allowPrivate: this.options.allowPrivate,
        timeoutMs: this.options.fetchTimeoutMs ?? PAGE_FETCH_TIMEOUT_MS,
        maxBytes: this.options.maxPageBytes ?? PAGE_MAX_BYTES,
        headers: { 'user-agent': USER_AGENT, accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1' },
      })
      const read = pageText(page)
      outcome = read.ok ? read : { error: read.error }
    } catch (err) {
      outcome = { error: fetchError(err, this.options.fetchTimeoutMs ?? PAGE_FETCH_TIMEOUT_MS) }
    }
    const fallbackTitle = clip(`${url.host}${url.pathname === '/' ? '' : url.pathname}`, MAX_TITLE_CHARS)
    if ('error' in outcome) return this.store(input, agentExists, { ...base, title: fallbackTitle }, null, outcome.error)
    const title = outcome.title ? clip(outcome.title, MAX_TITLE_CHARS) : fallbackTitle
    // A page longer than the pasted-text limit is cut to it rather than refused: its first
    // 200,000 characters are still worth citing.
    return this.store(input, agentExists, { ...base, title }, cutAtParagraph(outcome.text, MAX_TEXT_CHARS))
  }

  async list(workspaceId: string, agentId: string, page: { limit: number; after?: PageAfter | null }): Promise<{ items: KnowledgeDocument[]; next: PageAfter | null }> {
    return pageOf((limit, after) => this.repo.pageDocuments({ workspaceId, agentId }, limit, after), page.limit, page.after ?? null)
  }

  /** Raw rows of a page of the agent's documents, newest first (v1 lists run it through `paginate`). */
  page(workspaceId: string, agentId: string, limit: number, after: PageAfter | null): Promise<KnowledgeDocument[]> {
    return this.repo.pageDocuments({ workspaceId, agentId }, limit, after)
  }

  async get(workspaceId: string, agentId: string, documentId: string): Promise<KnowledgeDocument> {
    const doc = await this.repo.getDocument({ workspaceId, agentId }, documentId)
    if (!doc) throw new KnowledgeError(`knowledge document ${documentId} not found for this agent`, 404)
    return doc
  }

  /** Deletes the document and every passage, and drops them from the live index. */
  async remove(workspaceId: string, agentId: string, documentId: string): Promise<void> {
    const scope = { workspaceId, agentId }
    await this.get(workspaceId, agentId, documentId)
    await this.repo.deleteDocument(scope, documentId)
    // After the store: an index built meanwhile either missed the passages or is fixed here.
    const index = await this.indexes.peek(keyOf(scope))
    index?.removeDocument(documentId)
    await this.changed(scope)
  }

  /** Agent delete cascade: documents, passages, search log and the cached index. */
  async removeAllForAgent(workspaceId: string, agentId: string): Promise<void> {
    await this.repo.deleteAgent({ workspaceId, agentId })
    // Dropped after the store, so an index loaded before the delete is not left behind.
    this.indexes.delete(keyOf({ workspaceId, agentId }))
    await this.changed({ workspaceId, agentId })
  }

  /**
   * Forgets an agent's in-memory index so the next search rebuilds it from the store: what
   * another instance's change calls for (sync.ts), since this one's cache cannot see it.
   */
  invalidate(workspaceId: string, agentId: string): void {
    this.indexes.delete(keyOf({ workspaceId, agentId }))
  }

  /** `listener` runs after every add, remove and agent cascade, once the store has the change. */
  onChange(listener: KnowledgeChangeListener): void {
    this.changeListeners.push(listener)
  }

  private async changed(scope: Scope): Promise<void> {
    for (const listener of this.changeListeners) await listener({ workspaceId: scope.workspaceId, agentId: scope.agentId })
  }

  /** Ranked passages for a question; every search is logged for analytics (`simulated`: a simulations run's, which analytics leaves out). */
  async search(workspaceId: string, agentId: string, query: string, k = 5, simulated = false): Promise<SearchOutcome> {
    const q = (typeof query === 'string' ? query : '').replace(/\s+/g, ' ').trim().slice(0, MAX_QUERY_CHARS)
    if (!q) throw new KnowledgeError('query must not be empty', 400, 'query')
    const limit = Math.min(Math.max(Math.floor(k) || 1, 1), MAX_SEARCH_RESULTS)
    const index = await this.indexFor({ workspaceId, agentId })
    const hits = index.search(q, limit)
    const bestSimilarity = hits.reduce((best, h) => Math.max(best, h.similarity), 0)
    const found = bestSimilarity >= FOUND_SIMILARITY
    const entry: KnowledgeSearch = {
      id: newId('ks'),
      workspaceId,
      agentId,
      query: q,
      queryKey: q.toLowerCase().replace(/[\s?!.,;:]+$/, ''),
      found,
      bestSimilarity,
      ...(simulated ? { simulated: true as const } : {}),
      createdAt: iso(this.clock.now()),
    }
    await this.repo.logSearch(entry)
    return { query: q, found, bestSimilarity, hits }
  }

  private async store(
    scope: Scope,
    agentExists: AgentExists | undefined,
    meta: Pick<KnowledgeDocument, 'title' | 'type' | 'source'>,
    text: string | null,
    error: string | null = null,
  ): Promise<KnowledgeDocument> {
    const createdAt = iso(this.clock.now())
    const id = newId('doc')
    const base = { workspaceId: scope.workspaceId, agentId: scope.agentId }
    const passages: Passage[] = (text === null ? [] : chunkText(text)).map((chunk, position) => ({
      id: newId('psg'),
      ...base,
      documentId: id,
      position,
      text: chunk,
      title: meta.title,
      createdAt,
    }))
    const doc: KnowledgeDocument = {
      id,
      ...base,
      ...meta,
      status: error === null ? 'ready' : 'failed',
      error,
      passages: passages.length,
      createdAt,
    }
    await this.repo.insertDocument(doc, passages)
    await this.confirmAgent(scope, id, agentExists)
    // A cached (or in-flight) index learns the passages at once; add() skips ones it has.
    const index = passages.length > 0 ? await this.indexes.peek(keyOf(scope)) : null
    index?.add(passages)
    // A failed page adds no passages: no index anywhere is out of date.
    if (passages.length > 0) await this.changed(scope)
    return doc
  }

  /**
   * After the store: an agent deleted while this add fetched or stored gets nothing (see
   * AgentExists). Its document is taken back and the add answers the 404 a
   * request for a missing agent gets. So is it on any failure here: the caller is told the add
   * failed, and a retry would store the document twice.
   */
  private async confirmAgent(scope: Scope, documentId: string, agentExists: AgentExists | undefined): Promise<void> {
    try {
      const gone = agentExists !== undefined && !(await agentExists())
      // Worded as AgentService.get's 404: to the caller the agent is simply not there.
      if (gone) throw new KnowledgeError(`no agent ${scope.agentId} in this workspace`, 404)
    } catch (err) {
      await this.takeBack(scope, documentId)
      throw err
    }
  }

  /** As remove(): an index built meanwhile (a search) may hold the passages. */
  private async takeBack(input: Scope, documentId: string): Promise<void> {
    // Only the two fields: the add's input carries more (url, text), which would join the filter.
    const scope = { workspaceId: input.workspaceId, agentId: input.agentId }
    await this.repo.deleteDocument(scope, documentId)
    const index = await this.indexes.peek(keyOf(scope))
    index?.removeDocument(documentId)
    await this.changed(scope)
  }

  /** The agent's index: cached, or built once from the store. */
  private indexFor(scope: Scope): Promise<PassageIndex> {
    return this.indexes.get(keyOf(scope), async () => {
      const [documents, passages] = await Promise.all([this.repo.documentIdsOf(scope), this.repo.passagesOf(scope)])
      const index = new PassageIndex()
      index.add(passages.filter((p) => documents.has(p.documentId)))
      return index
    })
  }

  /** How many agents' indexes are held (tests and metrics). */
  get cachedAgents(): number {
    return this.indexes.size
  }
}

const keyOf = (scope: Scope) => `${scope.workspaceId}\u0000${scope.agentId}`

function checkUrl(raw: unknown): URL {
  if (typeof raw !== 'string' || !raw.trim()) throw new KnowledgeError('url must not be empty', 400, 'url')
  if (raw.length > MAX_URL_CHARS) throw new KnowledgeError(`url is longer than ${MAX_URL_CHARS} characters`, 400, 'url')
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw new KnowledgeError('url is not a valid URL', 400, 'url')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new KnowledgeError('url must start with http:// or https://', 400, 'url')
  }
  return url
}

/** Stored error text is shown to the customer: it says what happened without naming our
 * network's addresses (BlockedTargetError's own message, for logs, does). */
function fetchError(err: unknown, timeoutMs: number): string {
  if (err instanceof BlockedTargetError) {
    return err.reason.startsWith('scheme') ? 'the page redirected to an address that is not a web page' : 'the address points inside a private network, which the service does not fetch'
  }
  if (err instanceof FetchFailedError) {
    if (err.kind === 'timeout') return `the page did not answer within ${Math.round(timeoutMs / 1000)} seconds`
    if (err.kind === 'too_many_redirects') return 'the page redirected too many times'
    if (err.kind === 'bad_url') return 'the page redirected to an invalid address'
    return err.message
  }
  return 'could not read the page'
}

function deriveTitle(text: string): string {
  const first = text
    .trim()
    .split('\n', 1)[0]
    .replace(/^#{1,6}\s+/, '')
    .trim()
  return clip(first, DERIVED_TITLE_CHARS) || 'Pasted text'
}

/** Cuts at a word boundary and marks the cut. */
function clip(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim()
  if (t.length <= max) return t
  const cut = t.lastIndexOf(' ', max - 1)
  return `${t.slice(0, cut > max / 2 ? cut : max - 1)}…`
}

function cutAtParagraph(text: string, max: number): string {
  if (text.length <= max) return text
  const cut = text.lastIndexOf('\n\n', max)
  return text.slice(0, cut > max * 0.9 ? cut : max)
}
