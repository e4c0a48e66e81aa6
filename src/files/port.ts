/**
 * The file-storage port: files the service keeps and serves (call recordings, media customers
 * send), by key (`recordings/<call>-<try>.wav`, `files/<id>`). Adapters: DATA_DIR on one machine
 * (disk.ts), MongoDB GridFS when MONGODB_URL is set (gridfs.ts), so with several instances any one
 * serves any file. One contract suite (test/files/contract.ts) runs against both.
 */

export interface FileStorage {
  readonly kind: 'disk' | 'gridfs'
  /** Stores the bytes (or a file's, given as a Blob) under `key`, replacing any; a reader never sees part of it. */
  put(key: string, data: Uint8Array | Blob): Promise<void>
  /** The whole file, or null. */
  get(key: string): Promise<Uint8Array | null>
  /** The file as a stream (an HTTP answer's body) with its size, or null. */
  stream(key: string): Promise<{ body: ReadableStream<Uint8Array>; size: number } | null>
  /** False when there was nothing. */
  delete(key: string): Promise<boolean>
  /** Every key under `prefix` (which ends with `/`). */
  list(prefix: string): Promise<string[]>
  close(): Promise<void>
}

/** Segments of letters, digits, `.`, `_` and `-` joined by `/`; none empty, `.` or `..`. */
const KEY = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/

export function checkKey(key: string): string {
  if (!KEY.test(key) || key.length > 400) throw new Error(`not a file key: ${JSON.stringify(key)}`)
  return key
}

export function checkPrefix(prefix: string): string {
  if (!prefix.endsWith('/')) throw new Error(`a prefix ends with "/": ${JSON.stringify(prefix)}`)
  checkKey(prefix.slice(0, -1))
  return prefix
}
