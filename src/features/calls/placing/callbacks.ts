/**
 * The agent's `schedule_callback` tool, booked for real: a scheduled call (`sch_…`, the call
 * actor's `scheduled` state, woken by a durable timer) to the person, at the time they asked for
 * in the workspace's time zone, placed through POST /calls' own rules — consent, the agent on the
 * phone and published, the plan's scheduling horizon and balance — so a callback can do nothing a
 * developer's call could not. It stops like any waiting call: the person opting out, the call's
 * DELETE, or the customer workspace being deleted (CallService.stopWaiting).
 *
 * The outcome goes back to the model as the tool's output: booked (with the call id and the local
 * time to confirm), or not booked and why, in words it can pass on.
 */
import { type Clock, iso } from '../../../clock'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import type { Logger } from '../../../logger'
import { isRefused } from '../../../refusals'
import { type ContactService, normalizePhone } from '../../contacts/public'
import type { CallbackRequest } from '../../conversations/public'
import { PURPOSE_MAX } from '../model'
import type { CallService } from '../service'
import { callbackTime } from './callback-time'

export type CallbackOutcome = { scheduled: true; callId: string; at: string; localTime: string } | { scheduled: false; error: string }

export class CallbackBooking {
  constructor(
    private readonly d: {
      calls: Pick<CallService, 'place'>
      contacts: ContactService
      workspace: (id: string) => Promise<WorkspaceDoc | null>
      clock: Clock
      logger: Logger
    },
  ) {}

  async schedule(req: CallbackRequest): Promise<CallbackOutcome> {
    const workspace = await this.d.workspace(req.workspaceId)
    if (workspace?.status !== 'active') return { scheduled: false, error: 'this workspace cannot book calls' }
    if (!req.phone) return { scheduled: false, error: 'no number to call: ask the customer for their phone number with its country code' }
    const phone = normalizePhone(req.phone)
    if (!phone) return { scheduled: false, error: `"${req.phone}" is not a phone number: ask for it with its country code` }
    const now = this.d.clock.now()
    const time = callbackTime(req.when, workspace.timezone, now)
    if ('refused' in time) return { scheduled: false, error: time.refused }
    if (time.at <= now) return { scheduled: false, error: `${time.local} has passed: ask for a later time` }
    try {
      // The person asked to be called: they reached out, so they are a contact (docs/spec.md Contact);
      // one who opted out stays refused by the call's own consent check.
      if (!(await this.d.contacts.findByPhone(workspace.id, phone))) await this.d.contacts.create(workspace.id, { phone }).catch(() => null)
      const about = req.note ? `: ${req.note}` : ''
      const placed = await this.d.calls.place(workspace, {
        to: phone,
        purpose: `Hello, this is the call back you asked for${about}`.slice(0, PURPOSE_MAX),
        agent: req.agentId,
        scheduledFor: iso(time.at),
        metadata: { callbackFor: req.conversationId },
      })
      this.d.logger.info({ workspace: workspace.id, agent: req.agentId, call: placed.id, at: iso(time.at) }, 'callback booked')
      return { scheduled: true, callId: placed.id, at: iso(time.at), localTime: time.local }
    } catch (err) {
      // POST /calls' refusals (not on the phone, opted out, too far ahead, no balance) in its words.
      if (isRefused(err)) return { scheduled: false, error: err.message }
      throw err
    }
  }
}
