/**
 * Transferring a live call to a person (docs/api/calls.md "Transfer"): by hand (POST
 * /calls/{id}/transfer, the console's Transfer button) or by the agent's `transfer_call` tool.
 * Both name one of the agent's transfers; the call actor does the rest (machines/call-transfer.ts:
 * cold `transferring` → `transferred`; warm `consulting` → `joining` → `transferred`), and both wait
 * until the network has taken the hand-off (warm: placed the person's leg) or refused it, so the
 * answer (or what the agent says next) is the outcome. How a warm transfer ends later is told to
 * the caller by the agent (effects.ts, on `call.transfer_ended`).
 */

import type { TransferDestination } from '../../../../machines/call'
import type { Clock } from '../../../clock'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import { clashes, invalid, notThere, upstreamFailed } from '../../../refusals'
import type { AgentDoc } from '../../agents/public'
import { SENTENCE_WAIT_MS } from '../live/hand-off'
import { presentCall } from '../records/present'
import { type CallTryDoc, type CallTryRepo, newestTry, triesIn } from '../records/repository'
import type { PublishedAgents } from '../service'
import type { CallActors } from './actor'
import { BRIEF_DEADLINE_MS } from './brief-writer'

/**
 * How long a transfer waits for the network to take or refuse the hand-off: one REST update at
 * Twilio (bounded by its 10 s REST timeout) plus the actor's own turn, after the agent's sentence
 * (cold: at most SENTENCE_WAIT_MS), and for a warm one the model writing the person's brief first
 * (at most BRIEF_DEADLINE_MS).
 */
export const HAND_OFF_WAIT_MS = 15_000 + Math.max(SENTENCE_WAIT_MS, BRIEF_DEADLINE_MS)

/** Where the agent's words about a warm transfer's end go, to the call's voice session on whichever instance runs it. */
export const announceChannel = (callId: string) => `announce:${callId}`

export interface CallTransferDeps {
  tries: CallTryRepo
  published: Pick<PublishedAgents, 'live' | 'version'>
  actors: CallActors
  clock: Clock
}

/** The agent's destination called `name` (case-insensitive, spaces folded), or null. */
export function destinationNamed(agent: Pick<AgentDoc, 'transfers'>, name: string): TransferDestination | null {
  const key = name.replace(/\s+/g, ' ').trim().toLowerCase()
  const found = (agent.transfers ?? []).find((d) => d.name.toLowerCase() === key)
  return found ? { name: found.name, phoneNumber: found.phoneNumber, mode: found.mode } : null
}

export class CallTransfers {
  constructor(private readonly deps: CallTransferDeps) {}

  /** The transfers a call can be put through to: its agent's, as the version it talks as has them. */
  async destinations(workspaceId: string, id: string): Promise<TransferDestination[]> {
    const row = await newestTry(triesIn(this.deps.tries, workspaceId), id)
    if (!row) throw notThere(`no call ${id} in this workspace`)
    const agent = await this.agentOf(row)
    return (agent?.transfers ?? []).map((d) => ({ name: d.name, phoneNumber: d.phoneNumber, mode: d.mode }))
  }

  private async agentOf(row: CallTryDoc): Promise<AgentDoc | null> {
    return (row.agentVersion ? await this.deps.published.version(row.workspaceId, row.agentId, row.agentVersion) : null) ?? (await this.deps.published.live(row.workspaceId, row.agentId))
  }

  /** POST /calls/{id}/transfer: 202 with the call once the network took it; 400 naming `destination`, 404, 409. */
  async byHand(workspace: WorkspaceDoc, id: string, destinationName: string): Promise<CallTryDoc> {
    const row = await newestTry(triesIn(this.deps.tries, workspace.id), id)
    if (!row) throw notThere(`no call ${id} in this workspace`)
    if (row.status !== 'connected') throw clashes(`call ${id} is ${row.status}: only a connected call can be transferred`, { state: row.status, call: presentCall(row) })
    if (row.surface === 'web') throw clashes('a browser call has no phone line: it cannot be put through to a phone', { call: presentCall(row) })
    // The destinations of the version the call talks as (the published one when it has not started talking).
    const agent = await this.agentOf(row)
    const names = (agent?.transfers ?? []).map((d) => d.name)
    const destination = agent ? destinationNamed(agent, destinationName) : null
    if (!destination) {
      throw invalid(
        'destination',
        names.length ? `"${destinationName}" is not one of agent ${row.agentName}'s transfers: ${names.join(', ')}` : `agent ${row.agentName} has no transfers (set them on the agent and publish it)`,
      )
    }
    const failed = await this.request(id, destination, 'api')
    if (failed && failed.state !== 'connected') throw clashes(failed.message, { state: failed.state, call: presentCall(row) })
    const newest = (await newestTry(this.deps.tries, id)) ?? row
    if (failed) throw upstreamFailed(failed.message, { call: presentCall(newest) })
    return newest
  }

  /**
   * The agent's tool (live/voice-pipeline.ts): null once the network took the hand-off, else what
   * went wrong, in words the agent can say. A warm transfer the chart took is null either way:
   * its end, whatever it is, reaches the caller as the agent's words (effects.ts).
   */
  async byAgent(callId: string, agent: Pick<AgentDoc, 'transfers'>, name: string): Promise<string | null> {
    const destination = destinationNamed(agent, name)
    if (!destination) return `there is no transfer called ${name}`
    const failed = await this.request(callId, destination, 'agent')
    if (failed && destination.mode === 'warm' && failed.state === 'connected' && failed.ended) return null
    return failed?.message ?? null
  }

  /** Asks the actor; null when the hand-off was taken, else why not and the state it left the call in. */
  private async request(callId: string, destination: TransferDestination, by: 'agent' | 'api'): Promise<{ message: string; state: string; ended?: boolean } | null> {
    const { actors } = this.deps
    const asked = await actors.ask(callId, { type: 'transfer.request', at: this.deps.clock.now(), destination, by })
    if (!asked.ok) return { message: asked.refusal.message, state: asked.refusal.state }
    // Warm: taken once the person's leg is placed (startedAt), or once it has moved on (a report can beat the effect's answer).
    const settled = await actors.settle(callId, HAND_OFF_WAIT_MS, (s) => s.value !== 'transferring' && (s.value !== 'consulting' || transferOf(s.context)?.startedAt != null))
    const transfer = transferOf((settled.snapshot as { context?: unknown }).context)
    if (settled.state === 'connected' && transfer?.outcome === 'failed')
      return { message: `the transfer could not be made: ${transfer.error ?? 'the network refused it'}`, state: 'connected', ended: true }
    return null
  }
}

function transferOf(context: unknown): { outcome: string | null; error: string | null; startedAt: number | null } | null {
  return (context as { transfer?: { outcome: string | null; error: string | null; startedAt: number | null } | null } | undefined)?.transfer ?? null
}
