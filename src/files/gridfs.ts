/**
 * Files in MongoDB GridFS (the driver's GridFSBucket, bucket `files`), a key being the filename:
 * every instance reads what any wrote. A put uploads a new file and then deletes the older ones of
 * that name, so a reader finds the previous version until the new one is complete; reads take the
 * newest complete upload.
 */
import { type Db, GridFSBucket, MongoClient } from 'mongodb'
import { checkKey, checkPrefix, type FileStorage } from './port'

const BUCKET = 'files'

export async function openGridFsStorage(url: string, dbName?: string): Promise<FileStorage> {
  const client = new MongoClient(url)
  await client.connect()
  return gridFsStorage(client.db(dbName), () => client.close())
}

export function gridFsStorage(db: Db, close: () => Promise<void> = async () => {}): FileStorage {
  const bucket = new GridFSBucket(db, { bucketName: BUCKET })
  const versions = (key: string) => bucket.find({ filename: checkKey(key) }, { sort: { uploadDate: -1, _id: -1 } }).toArray()
  const newest = async (key: string) => (await versions(key))[0] ?? null
  return {
    kind: 'gridfs',
    async put(key, data) {
      const upload = bucket.openUploadStream(checkKey(key))
      const body = data instanceof Uint8Array ? data : new Uint8Array(await data.arrayBuffer())
      await new Promise<void>((resolve, reject) => {
        upload.once('error', reject)
        upload.once('finish', () => resolve())
        upload.end(body)
      })
      for (const old of await versions(key)) if (!old._id.equals(upload.id)) await bucket.delete(old._id).catch(() => {})
    },
    async get(key) {
      const file = await newest(key)
      if (!file) return null
      const chunks: Uint8Array[] = []
      for await (const chunk of bucket.openDownloadStream(file._id)) chunks.push(chunk as Uint8Array)
      return new Uint8Array(Buffer.concat(chunks))
    },
    async stream(key) {
      const file = await newest(key)
      if (!file) return null
      const download = bucket.openDownloadStream(file._id)
      const chunks = download[Symbol.asyncIterator]()
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await chunks.next()
          if (next.done) controller.close()
          else controller.enqueue(new Uint8Array(next.value as Uint8Array))
        },
        cancel: () => void download.destroy(),
      })
      return { body, size: file.length }
    },
    async delete(key) {
      const all = await versions(key)
      for (const f of all) await bucket.delete(f._id).catch(() => {})
      return all.length > 0
    },
    async list(prefix) {
      const escaped = checkPrefix(prefix).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      const names = await bucket.find({ filename: { $regex: `^${escaped}` } }, { projection: { filename: 1 } }).toArray()
      return [...new Set(names.map((f) => f.filename))].sort()
    },
    close,
  }
}
