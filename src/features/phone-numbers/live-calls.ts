/**
 * A number is not released while a call on it is live (docs/design.md console table). Phone numbers are
 * built before calls, so the calls service cannot be asked: this reads the calls feature's rows
 * (`call_tries`), where our number is `from` in both directions (an inbound call's `from` is the
 * number it rang). It opens the collection on first use, after the calls feature opened it with its
 * indexes (the store keeps one instance per name: the first opener's spec is the collection's).
 */
import { clashes } from '../../refusals'
import type { DocumentStore } from '../../store/port'
import { WorkspaceCollection } from '../../store/workspace-scoped'
import type { BeforeRelease } from './service'

interface CallRow {
  [field: string]: unknown
  id: string
  callId: string
  workspaceId: string
  from: string | null
  status: string
}

/** The call states in which a line is open on the number (machines/call.ts). */
const LIVE = ['ringing', 'connected']

export function refuseWhileLive(store: DocumentStore): BeforeRelease {
  let rows: Promise<WorkspaceCollection<CallRow>> | null = null
  return async (number) => {
    rows ??= store.collection<CallRow>({ name: 'call_tries', indexes: [] }).then(
      (all) => new WorkspaceCollection(all),
      (err) => {
        rows = null
        throw err
      },
    )
    const live = await (await rows).in(number.workspaceId).findOne({ from: number.number, status: { $in: LIVE } })
    if (live) throw clashes(`${number.number} has a live call (${live.callId}, ${live.status}); release it once the call has ended`, { call: live.callId })
  }
}
