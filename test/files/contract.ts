/**
 * The file-storage contract: every adapter (src/files) runs this suite and must pass it unchanged.
 * Each test uses keys under its own prefix, so tests never see each other's files.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import type { FileStorage } from '../../src/files/port'

const text = (s: string) => new TextEncoder().encode(s)
const read = async (body: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(body).arrayBuffer())

export function fileStorageContract(name: string, open: () => Promise<FileStorage>): void {
  describe(`file storage contract: ${name}`, () => {
    let files: FileStorage
    let n = 0
    const prefix = () => `t${Date.now().toString(36)}${n++}/`
    beforeAll(async () => {
      files = await open()
    })
    afterAll(() => files?.close())

    test('put then get and stream answer the same bytes; a missing key is null', async () => {
      const p = prefix()
      const bytes = new Uint8Array(randomBytes(300_000))
      await files.put(`${p}a.bin`, bytes)
      expect(await files.get(`${p}a.bin`)).toEqual(bytes)
      const streamed = await files.stream(`${p}a.bin`)
      expect(streamed!.size).toBe(bytes.length)
      expect(await read(streamed!.body)).toEqual(bytes)
      expect(await files.get(`${p}missing.bin`)).toBeNull()
      expect(await files.stream(`${p}missing.bin`)).toBeNull()
    })

    test('a put replaces the file; a Blob (a file on disk) is stored as its bytes', async () => {
      const p = prefix()
      await files.put(`${p}x.txt`, text('first version, longer'))
      await files.put(`${p}x.txt`, new Blob([text('second')]))
      expect(new TextDecoder().decode((await files.get(`${p}x.txt`))!)).toBe('second')
      expect((await files.stream(`${p}x.txt`))!.size).toBe(6)
      expect(await files.list(p)).toEqual([`${p}x.txt`])
    })

    test('an empty file is a file', async () => {
      const p = prefix()
      await files.put(`${p}empty`, new Uint8Array())
      expect(await files.get(`${p}empty`)).toEqual(new Uint8Array())
      expect(await files.list(p)).toEqual([`${p}empty`])
    })

    test('delete removes it, and says whether there was one', async () => {
      const p = prefix()
      await files.put(`${p}gone.wav`, text('x'))
      expect(await files.delete(`${p}gone.wav`)).toBe(true)
      expect(await files.get(`${p}gone.wav`)).toBeNull()
      expect(await files.delete(`${p}gone.wav`)).toBe(false)
    })

    test('list answers the keys under a prefix, nested ones too, and nothing else', async () => {
      const p = prefix()
      const other = prefix()
      await files.put(`${p}b.wav`, text('b'))
      await files.put(`${p}a.wav`, text('a'))
      await files.put(`${p}deeper/c.wav`, text('c'))
      await files.put(`${other}a.wav`, text('not mine'))
      expect(await files.list(p)).toEqual([`${p}a.wav`, `${p}b.wav`, `${p}deeper/c.wav`])
      expect(await files.list(`${prefix()}`)).toEqual([])
    })

    test('concurrent puts of one key leave one whole version', async () => {
      const p = prefix()
      const versions = Array.from({ length: 8 }, (_, i) => new Uint8Array(50_000).fill(i))
      await Promise.all(versions.map((v) => files.put(`${p}race.bin`, v)))
      const got = (await files.get(`${p}race.bin`))!
      expect(versions.some((v) => Buffer.from(v).equals(Buffer.from(got)))).toBe(true)
      expect(await files.list(p)).toEqual([`${p}race.bin`])
    })

    test('keys that could escape or are not keys are refused', async () => {
      for (const key of ['../x', '/abs', 'a//b', 'a/../b', '', 'a/', 'sp ace', '.hidden']) {
        await expect(files.put(key, text('x'))).rejects.toThrow('not a file key')
      }
      await expect(files.list('no-slash')).rejects.toThrow('ends with "/"')
    })
  })
}
