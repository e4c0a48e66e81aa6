/** Contract part three: a workspace-scoped view never reaches another workspace's documents. */
import { beforeEach, describe, expect, test } from 'bun:test'
import { WorkspaceCollection, type WorkspaceDoc, WorkspaceOverrideError, workspaceSpec } from '../../src/store/workspace-scoped'
import type { ContractContext } from './contract'

type Note = WorkspaceDoc & { createdAt: string; text: string; n: number; kind: string }

const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 10, minute)).toISOString()

export function scopedContract(ctx: ContractContext): void {
  describe('workspace-scoped view', () => {
    let notes: WorkspaceCollection<Note>
    // Two workspaces with documents of the same shapes, so every filter would match both.
    beforeEach(async () => {
      notes = new WorkspaceCollection(await ctx.fresh<Note>(workspaceSpec('unused').indexes))
      const all = notes.acrossWorkspaces
      for (const [ws, i] of [
        ['w1', 1],
        ['w1', 2],
        ['w2', 3],
        ['w2', 4],
        ['w2', 5],
      ] as const)
        await all.insert({ id: `n${i}`, workspaceId: ws, createdAt: at(i), text: `note ${i}`, n: i, kind: i % 2 ? 'odd' : 'even' })
    })

    test('reads see only the view workspace: get, findOne, find, page, count, sum, group', async () => {
      const w1 = notes.in('w1')
      expect((await w1.get('n1'))?.text).toBe('note 1')
      expect(await w1.get('n3')).toBeNull()
      expect((await w1.findOne({ kind: 'odd' }))?.id).toBe('n1')
      expect(await w1.findOne({ text: 'note 3' })).toBeNull()
      expect((await w1.find()).map((d) => d.id).sort()).toEqual(['n1', 'n2'])
      expect((await w1.find({ n: { $gte: 2 } })).map((d) => d.id)).toEqual(['n2'])
      expect((await w1.page({}, 10)).map((d) => d.id)).toEqual(['n2', 'n1'])
      expect((await notes.in('w2').page({}, 2)).map((d) => d.id)).toEqual(['n5', 'n4'])
      expect(await w1.count()).toBe(2)
      expect(await notes.in('w2').count({ kind: 'odd' })).toBe(2)
      expect(await w1.sum('n')).toBe(3)
      expect(await w1.group({}, { by: 'kind' })).toEqual(
        expect.arrayContaining([
          { key: 'odd', count: 1, sums: {} },
          { key: 'even', count: 1, sums: {} },
        ]),
      )
      expect(await notes.in('w3').find()).toEqual([])
    })

    test("update, replace and delete of another workspace's document answer as for none and leave it untouched", async () => {
      const w1 = notes.in('w1')
      expect(await w1.update('n3', { text: 'taken' })).toBeNull()
      expect(await w1.update('n3', {}, ['text'])).toBeNull()
      expect(await w1.delete('n3')).toBe(false)
      expect(await w1.replace({ id: 'n3', createdAt: at(3), text: 'taken', n: 3, kind: 'odd' })).toBe(false)
      expect(await w1.deleteMany({ kind: 'odd' })).toBe(1)
      expect(await notes.acrossWorkspaces.get('n3')).toEqual({ id: 'n3', workspaceId: 'w2', createdAt: at(3), text: 'note 3', n: 3, kind: 'odd' })
      expect(await notes.acrossWorkspaces.count({})).toBe(4)
      // Its own documents it does change.
      expect((await w1.update('n2', { text: 'mine' }))?.text).toBe('mine')
      expect(await w1.replace({ id: 'n2', createdAt: at(2), text: 'replaced', n: 2, kind: 'even' })).toBe(true)
      expect(await notes.acrossWorkspaces.get('n2')).toEqual({ id: 'n2', workspaceId: 'w1', createdAt: at(2), text: 'replaced', n: 2, kind: 'even' })
      expect(await w1.delete('n2')).toBe(true)
      expect(await w1.count()).toBe(0)
      expect(await notes.in('w2').count()).toBe(3)
    })

    test('insert stamps the view workspace', async () => {
      const w1 = notes.in('w1')
      const stored = await w1.insert({ id: 'n9', createdAt: at(9), text: 'new', n: 9, kind: 'odd' })
      expect(stored.workspaceId).toBe('w1')
      expect((await notes.acrossWorkspaces.get('n9'))?.workspaceId).toBe('w1')
      expect(await notes.in('w2').get('n9')).toBeNull()
      // Naming the same workspace is allowed.
      expect((await w1.insert({ id: 'n10', workspaceId: 'w1', createdAt: at(10), text: 'x', n: 10, kind: 'even' })).workspaceId).toBe('w1')
    })

    test('a caller cannot override the workspace: in a filter, an insert, an update or a replace', async () => {
      const w1 = notes.in('w1')
      // The types refuse these; the casts show what untyped callers would get.
      const other = { workspaceId: 'w2' } as unknown as Record<string, never> // the type refuses it; an untyped caller's filter
      await expect(w1.find(other)).rejects.toThrow(WorkspaceOverrideError)
      await expect(w1.findOne({ ...other, kind: 'odd' })).rejects.toThrow(WorkspaceOverrideError)
      await expect(w1.count(other)).rejects.toThrow(WorkspaceOverrideError)
      await expect(w1.deleteMany(other)).rejects.toThrow(WorkspaceOverrideError)
      const anyOther = { workspaceId: { $ne: 'x' } } as unknown as Record<string, never> // as above: what the type refuses
      await expect(w1.page(anyOther, 10)).rejects.toThrow(WorkspaceOverrideError)
      await expect(w1.insert({ id: 'n11', workspaceId: 'w2', createdAt: at(11), text: 'x', n: 11, kind: 'odd' })).rejects.toThrow(WorkspaceOverrideError)
      await expect(w1.update('n1', { workspaceId: 'w2' })).rejects.toThrow(WorkspaceOverrideError)
      await expect(w1.update('n1', {}, ['workspaceId'])).rejects.toThrow(WorkspaceOverrideError)
      await expect(w1.replace({ id: 'n1', workspaceId: 'w2', createdAt: at(1), text: 'moved', n: 1, kind: 'odd' })).rejects.toThrow(WorkspaceOverrideError)
      expect(await notes.acrossWorkspaces.get('n11')).toBeNull()
      expect((await notes.acrossWorkspaces.get('n1'))?.workspaceId).toBe('w1')
      expect(() => notes.in('')).toThrow()
    })

    test('workspaceSpec adds the newest-first workspace index once, before its own', () => {
      const spec = workspaceSpec('things', [{ name: 'by_phone', fields: [['phone', 1]] }])
      expect(spec.name).toBe('things')
      expect(spec.indexes.map((i) => i.name)).toEqual(['workspace_created', 'by_phone'])
      expect(spec.indexes[0]!.fields).toEqual([
        ['workspaceId', 1],
        ['createdAt', -1],
        ['id', -1],
      ])
    })
  })
}
