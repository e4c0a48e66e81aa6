/**
 * The way into an agent's publication actor: read where it stands, send a command and wait until
 * its effects have run, tell it about edits. Routes never talk to the runtime directly.
 *
 * A command is sent with the next version numbers after the ones the chart has accepted, and a
 * `commandId`. The chart takes it only in a resting state and only with the next numbers, so when
 * two requests race for one agent exactly one is taken; the other sees a different
 * `lastCommandId`, waits for the winner's effects and tries again with fresh numbers. A command
 * the chart refuses (unpublish of a draft) answers 409 with the chart's words, which name the state.
 */

import { ActorNotFoundError, ActorUnavailableError, VersionMismatchError } from '../../../actors/errors'
import { type AgentPublicationContext, type AgentPublicationEvent, type AgentPublicationState, canApply, initialContext, isResting } from '../../../machines/agent-publication'
import type { Clock } from '../../clock'
import { randomId } from '../../ids'
import type { Logger } from '../../logger'
import { clashes, unavailable } from '../../refusals'
import type { AgentPublicationActors } from './actor'

/** The agent a command is about (its workspace travels into the chart for the effects). */
export interface AgentRef {
  id: string
  workspaceId: string
}

export interface PublicationView {
  state: AgentPublicationState
  context: AgentPublicationContext
}

export type Command =
  | { type: 'agent.publish'; changeSummary: string | null }
  | { type: 'agent.unpublish' }
  | { type: 'agent.rollback'; toVersionId: number }
  | { type: 'agent.checkpoint'; label: string | null; environment: string; changeSummary: string | null }

/** The numbers the chart took the command with (0 where the command uses none: unpublish). */
export interface Accepted {
  versionId: number
  backupVersionId: number
}

// Each retry means another command for the same agent won the race and has finished its effects;
// five in a row means the agent is being hammered, and the caller is better told to retry.
const MAX_ATTEMPTS = 5

/** The chart of an agent nothing has been asked of yet: draft only, no versions. */
function fresh(agent: AgentRef): PublicationView {
  return { state: 'draft', context: initialContext({ agentId: agent.id, workspaceId: agent.workspaceId }) }
}

// A command takes milliseconds: whatever held the agent is done within a second (Retry-After: 1).
const busy = (message: string) => unavailable(`${message}; retry in a moment`, 1)

export class Publication {
  constructor(
    private readonly kind: Pick<AgentPublicationActors, 'read' | 'send' | 'settle'>,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Where the agent stands as stored (an effect may be in flight). */
  async view(agent: AgentRef): Promise<PublicationView> {
    const record = await this.kind.read(agent.id)
    if (!record) return fresh(agent)
    if (record.versionMismatch) throw busy(`agent ${agent.id}'s publication record is from another service version`)
    return { state: record.state as AgentPublicationState, context: (record.snapshot as { context: AgentPublicationContext }).context }
  }

  /** Where the agent stands once no effect is in flight. */
  async settled(agent: AgentRef): Promise<PublicationView> {
    const record = await this.kind.read(agent.id)
    if (record?.pendingWork) await this.guard(() => this.kind.settle(agent.id))
    return this.view(agent)
  }

  /** Runs a command to its end and returns the version numbers the chart took it with. */
  async command(agent: AgentRef, by: string, command: Command): Promise<Accepted> {
    const commandId = randomId()
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const before = await this.settled(agent)
      const event = this.eventFor(command, before.context.lastVersionId, commandId, by)
      const after = await this.guard(() => this.kind.send(agent.id, event, { input: { agentId: agent.id, workspaceId: agent.workspaceId } }))
      if (after.context.lastCommandId === commandId) {
        await this.finished(agent, commandId)
        return {
          versionId: 'versionId' in event ? event.versionId : 0,
          backupVersionId: 'backupVersionId' in event ? event.backupVersionId : 0,
        }
      }
      const state = String(after.value)
      if (isResting(state)) {
        const verdict = canApply(state, event.type)
        if (!verdict.ok) throw clashes(verdict.message, { state: verdict.state })
      }
    }
    throw busy(`agent ${agent.id} is busy with other version changes`)
  }

  /** The panels that now differ from the published version (after an edit of the draft). */
  async edited(agent: AgentRef, changedFields: string[]): Promise<void> {
    try {
      await this.kind.send(agent.id, { type: 'agent.edit', at: this.clock.now(), changedFields })
    } catch (err) {
      if (!(err instanceof ActorNotFoundError)) throw err
    }
  }

  private async finished(agent: AgentRef, commandId: string): Promise<void> {
    const done = await this.guard(() => this.kind.settle(agent.id))
    const failure = (done.snapshot as { context: AgentPublicationContext }).context.lastFailure
    if (failure?.commandId === commandId) {
      this.logger.error({ agent: agent.id, failure }, 'agent publication effect failed')
      throw busy(`could not ${failure.command} agent ${agent.id}: ${failure.message}`)
    }
  }

  private eventFor(command: Command, last: number, commandId: string, by: string): AgentPublicationEvent {
    const base = { at: this.clock.now(), commandId, by }
    switch (command.type) {
      case 'agent.publish':
        return { ...base, ...command, versionId: last + 1 }
      case 'agent.checkpoint':
        return { ...base, ...command, versionId: last + 1 }
      case 'agent.rollback':
        return { ...base, ...command, backupVersionId: last + 1, versionId: last + 2 }
      case 'agent.unpublish':
        return { ...base, ...command }
    }
  }

  /** Runtime failures as HTTP answers: the actor is busy elsewhere or on another chart version. */
  private async guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (err) {
      if (err instanceof ActorUnavailableError) throw busy(err.message)
      if (err instanceof VersionMismatchError) throw busy(err.message)
      throw err
    }
  }
}
