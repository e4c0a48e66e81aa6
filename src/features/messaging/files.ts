/**
 * Media customers send (a photo, a voice note, a document): fetched from the platform once, kept
 * in DATA_DIR/files, and handed out as our own links valid for eight hours from the moment they
 * are given (docs/spec.md: "Media comes back as links valid for eight hours"), signed with the
 * service's secret so they need no key: `GET /files/{id}/{expires}/{signature}`. Erased with the
 * customer. The bytes are kept behind the file-storage port (src/files): DATA_DIR/files on one
 * machine, GridFS with MONGODB_URL, so with several instances any one serves any file.
 */

import { createHmac, timingSafeEqual } from 'node:crypto'
import { Elysia, t } from 'elysia'
import { type Clock, iso } from '../../clock'
import type { FileStorage } from '../../files/port'
import { newId } from '../../ids'
import type { DocumentStore } from '../../store/port'
import { WorkspaceCollection } from '../../store/workspace-scoped'

/** docs/spec.md: links valid for eight hours. */
export const LINK_TTL_MS = 8 * 60 * 60 * 1000
/** WhatsApp's own largest media (documents) is 100 MB; nothing bigger can arrive. */
export const MAX_FILE_BYTES = 100 * 1024 * 1024

/** Where a received file's bytes are kept (DATA_DIR/files/<id> on disk). */
const fileKey = (id: string) => `files/${id}`

interface FileDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  mime: string
  name: string | null
  bytes: number
  createdAt: string
}

export class ReceivedFiles {
  private constructor(
    private readonly files: WorkspaceCollection<FileDoc>,
    private readonly storage: FileStorage,
    private readonly secret: string,
    private readonly publicBaseUrl: string,
    private readonly clock: Clock,
  ) {}

  static async open(store: DocumentStore, deps: { storage: FileStorage; secret: string; publicBaseUrl: string; clock: Clock }): Promise<ReceivedFiles> {
    const files = await store.collection<FileDoc>({ name: 'files', indexes: [{ name: 'workspace', fields: [['workspaceId', 1]] }] })
    return new ReceivedFiles(new WorkspaceCollection(files), deps.storage, deps.secret, deps.publicBaseUrl.replace(/\/$/, ''), deps.clock)
  }

  /** Keeps the bytes; answers the reference a message part stores (`file:<id>`). */
  async save(workspaceId: string, bytes: Uint8Array, mime: string, name: string | null): Promise<string> {
    if (bytes.length > MAX_FILE_BYTES) throw new Error(`a file of ${bytes.length} bytes is over ${MAX_FILE_BYTES}`)
    const id = newId('file')
    await this.storage.put(fileKey(id), bytes)
    await this.files.in(workspaceId).insert({ id, mime, name, bytes: bytes.length, createdAt: iso(this.clock.now()) })
    return `file:${id}`
  }

  /** A link to a stored reference, valid eight hours from now. */
  link(ref: string): string {
    const id = ref.replace(/^file:/, '')
    const expires = this.clock.now() + LINK_TTL_MS
    return `${this.publicBaseUrl}/files/${id}/${expires}/${this.sign(id, expires)}`
  }

  async erase(workspaceId: string): Promise<void> {
    const files = this.files.in(workspaceId)
    for (const f of await files.find()) {
      await this.storage.delete(fileKey(f.id))
      await files.delete(f.id)
    }
  }

  route() {
    return new Elysia().get(
      '/files/:id/:expires/:signature',
      async ({ params, set }) => {
        const expires = Number(params.expires)
        const gone = () => {
          set.status = 404
          return { error: { code: 'not_found', message: 'no file here (the link expired, or never pointed anywhere)' } }
        }
        if (!Number.isSafeInteger(expires) || expires <= this.clock.now()) return gone()
        const want = Buffer.from(this.sign(params.id, expires))
        const given = Buffer.from(params.signature)
        if (want.length !== given.length || !timingSafeEqual(want, given)) return gone()
        // A signed link names the file alone: the signature, not a workspace, is what lets it through.
        const doc = await this.files.acrossWorkspaces.get(params.id)
        const file = doc ? await this.storage.stream(fileKey(doc.id)) : null
        if (!doc || !file) return gone()
        const headers: Record<string, string> = { 'content-type': doc.mime, 'content-length': String(file.size) }
        if (doc.name) headers['content-disposition'] = `inline; filename="${doc.name.replace(/["\\\r\n]/g, '_')}"`
        return new Response(file.body, { headers })
      },
      { params: t.Object({ id: t.String(), expires: t.String(), signature: t.String() }), detail: { hide: true } },
    )
  }

  private sign(id: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`file:${id}:${expires}`).digest('base64url').slice(0, 32)
  }
}
