/** The file-storage contract against DATA_DIR (always), and what stays on disk. */
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { diskFileStorage } from '../../src/files/disk'
import { fileStorageContract } from './contract'

const dir = mkdtempSync(join(tmpdir(), 'files-disk-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

fileStorageContract('disk', async () => diskFileStorage(dir))

test('a key is a path under DATA_DIR, where earlier versions kept recordings and received files', async () => {
  const files = diskFileStorage(dir)
  await files.put('recordings/out_1-1.wav', new Uint8Array([1, 2, 3]))
  expect(existsSync(join(dir, 'recordings', 'out_1-1.wav'))).toBe(true)
  // No temporary file is left behind.
  expect(readdirSync(join(dir, 'recordings'))).toEqual(['out_1-1.wav'])
})
