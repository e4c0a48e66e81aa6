/**
 * Files in DATA_DIR, a key being a path under it (so recordings stay in DATA_DIR/recordings and
 * received media in DATA_DIR/files, where earlier versions kept them). A write goes to a temporary
 * name and is renamed over the key, so a reader sees the old file or the new one, never part.
 */
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { randomId } from '../ids'
import { checkKey, checkPrefix, type FileStorage } from './port'

/** Temporary names carry this; listing skips them. */
const PARTIAL = '.partial-'

export function diskFileStorage(dataDir: string): FileStorage {
  const path = (key: string) => join(dataDir, checkKey(key))
  const missing = (err: unknown) => (err as { code?: string }).code === 'ENOENT'
  return {
    kind: 'disk',
    async put(key, data) {
      const target = path(key)
      await mkdir(dirname(target), { recursive: true })
      const partial = `${target}${PARTIAL}${randomId(8)}`
      try {
        await Bun.write(partial, data)
        await rename(partial, target)
      } catch (err) {
        await rm(partial, { force: true })
        throw err
      }
    },
    async get(key) {
      try {
        return new Uint8Array(await readFile(path(key)))
      } catch (err) {
        if (missing(err)) return null
        throw err
      }
    },
    async stream(key) {
      const file = Bun.file(path(key))
      if (!(await file.exists())) return null
      return { body: file.stream(), size: file.size }
    },
    async delete(key) {
      const file = Bun.file(path(key))
      if (!(await file.exists())) return false
      await rm(path(key), { force: true })
      return true
    },
    async list(prefix) {
      const dir = join(dataDir, checkPrefix(prefix))
      const names = await readdir(dir, { recursive: true, withFileTypes: true }).catch((err) => {
        if (missing(err)) return []
        throw err
      })
      return names
        .filter((d) => d.isFile() && !d.name.includes(PARTIAL))
        .map(
          (d) =>
            `${prefix}${join(d.parentPath ?? (d as { path?: string }).path ?? dir, d.name)
              .slice(dir.length)
              .replace(/^\/+/, '')}`,
        )
        .sort()
    },
    async close() {},
  }
}
