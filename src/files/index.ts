/** Picks the file storage: GridFS in MongoDB when a URL is configured, else DATA_DIR. */
import { diskFileStorage } from './disk'
import type { FileStorage } from './port'

export async function openFileStorage(opts: { dataDir: string; mongodbUrl?: string }): Promise<FileStorage> {
  if (opts.mongodbUrl) {
    // Loaded lazily so a DATA_DIR deployment never loads the driver.
    const { openGridFsStorage } = await import('./gridfs')
    return openGridFsStorage(opts.mongodbUrl)
  }
  return diskFileStorage(opts.dataDir)
}
