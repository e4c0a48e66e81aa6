/**
 * Sequences (docs/spec.md Templates, sequences): created in the console, listed in v1 (active only),
 * people enrolled through v1 under SPEC's enrol rules, each enrolment run by its actor
 * (machines/enrolment.ts). Sending a step goes through the messaging platform and lands in the
 * person's chat-app conversation like any agent message.
 */

import type { MessageCategory } from '../../catalog/prices'
import { type Clock, iso } from '../../clock'
import { newId } from '../../ids'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Logger } from '../../logger'
import type { MessagingPlatform, Sent } from '../../providers/messaging/port'
import { invalid, notThere } from '../../refusals'
import type { PageAfter } from '../../store/port'
import type { WorkspaceCollection } from '../../store/workspace-scoped'
import { type ContactService, normalizePhone } from '../contacts/public'
import type { ConversationFeature } from '../conversations/public'
import type { PhoneNumberService } from '../phone-numbers/public'
import type { TemplateService } from '../templates/public'
import type { Meter } from '../usage/public'
import type { EnrolmentActors, EnrolmentEffectPort } from './actor'
import type { EnrolmentDoc, SequenceDoc, SequenceStep } from './repository'

/** docs/spec.md enrol rules: at most 20 variables, names up to 60 characters, values up to 300. */
export const MAX_VARIABLES = 20
export const MAX_VARIABLE_NAME = 60
export const MAX_VARIABLE_VALUE = 300
/** The customer's service window for a text step (docs/spec.md: 24 hours after they last wrote). */
const WINDOW_MS = 24 * 60 * 60 * 1000

export const presentSequence = (s: SequenceDoc) => ({ id: s.id, name: s.name, status: s.status, agent: s.agentId, exitOnReply: s.exitOnReply, createdAt: s.createdAt })

export interface SequenceDeps {
  sequences: WorkspaceCollection<SequenceDoc>
  enrolments: WorkspaceCollection<EnrolmentDoc>
  contacts: ContactService
  numbers: PhoneNumberService
  templates: TemplateService
  conversations: ConversationFeature['conversations']
  platform: MessagingPlatform
  meter: Pick<Meter, 'charge' | 'messagesLeft' | 'messageRefusal'>
  clock: Clock
  /** Where a step refused for money is said (a warn line); unset in unit tests. */
  logger?: Logger
  actors: EnrolmentActors
  agentExists: (workspaceId: string, id: string) => Promise<boolean>
}

export class SequenceService {
  constructor(private readonly d: SequenceDeps) {}

  /** 400 naming `agent` when it is not this workspace's, or the step that is neither a template nor a text. */
  async create(
    workspaceId: string,
    input: { name: string; agentId: string; exitOnReply?: boolean; status?: 'active' | 'archived'; steps: { template?: string; text?: string; delayMinutes: number }[] },
  ): Promise<SequenceDoc> {
    if (!(await this.d.agentExists(workspaceId, input.agentId))) throw invalid('agent', `no agent ${input.agentId} in this workspace`)
    const steps: SequenceStep[] = input.steps.map((s, i) => {
      if ((s.template === undefined) === (s.text === undefined)) throw invalid(`steps[${i}]`, 'give exactly one of template or text')
      return { template: s.template ?? null, text: s.text ?? null, delayMinutes: s.delayMinutes }
    })
    const doc: SequenceDoc = {
      id: newId('seq'),
      workspaceId,
      name: input.name,
      agentId: input.agentId,
      exitOnReply: input.exitOnReply ?? true,
      status: input.status ?? 'active',
      steps,
      createdAt: iso(this.d.clock.now()),
    }
    await this.d.sequences.in(workspaceId).insert(doc)
    return doc
  }

  page(workspaceId: string, limit: number, after: PageAfter | null): Promise<SequenceDoc[]> {
    return this.d.sequences.in(workspaceId).page({ status: 'active' }, limit, after)
  }

  async enrol(workspace: WorkspaceDoc, sequenceId: string, body: { to: string; variables?: Record<string, string> }): Promise<{ enrolled: true; id: string } | { enrolled: false; reason: string }> {
    const d = this.d
    const sequence = await d.sequences.in(workspace.id).get(sequenceId)
    if (sequence?.status !== 'active') throw notThere(`no active sequence ${sequenceId} in this workspace`)
    const variables = body.variables ?? {}
    const names = Object.keys(variables)
    if (names.length > MAX_VARIABLES) throw invalid('variables', `at most ${MAX_VARIABLES} variables (${names.length} given)`)
    for (const name of names) {
      if (name.length > MAX_VARIABLE_NAME) throw invalid(`variables.${name.slice(0, 20)}`, `names are at most ${MAX_VARIABLE_NAME} characters`)
      if (typeof variables[name] !== 'string') throw invalid(`variables.${name}`, 'must be a string')
      if (variables[name]!.length > MAX_VARIABLE_VALUE) throw invalid(`variables.${name}`, `values are at most ${MAX_VARIABLE_VALUE} characters`)
    }
    const phone = normalizePhone(body.to)
    if (!phone) throw invalid('to', `"${body.to}" is not a phone number`)
    const contact = await d.contacts.findByPhone(workspace.id, phone)
    if (!contact) return { enrolled: false, reason: 'not_a_contact' }
    if (contact.optedOut) return { enrolled: false, reason: 'opted_out' }
    if (!sequence.steps.length) return { enrolled: false, reason: 'no_first_message' }
    if ((await d.enrolments.in(workspace.id).find({ sequenceId, phone })).some((e) => e.status === 'active')) return { enrolled: false, reason: 'already_enrolled' }
    const now = d.clock.now()
    const id = newId('enr')
    await d.enrolments.in(workspace.id).insert({
      id,
      sequenceId,
      contactId: contact.id,
      phone,
      variables,
      status: 'active',
      step: 0,
      nextAt: null,
      stopReason: null,
      steps: {},
      createdAt: iso(now),
    })
    await d.actors.spawn(id, { id, at: now, delays: sequence.steps.map((s) => s.delayMinutes * 60_000) })
    return { enrolled: true, id }
  }

  /** Stops the person's active enrolments: a reply stops those with exitOnReply; other reasons stop all. */
  async stopFor(workspaceId: string, phone: string, reason: 'replied' | 'opted_out'): Promise<void> {
    for (const e of await this.d.enrolments.in(workspaceId).find({ phone })) {
      if (e.status !== 'active') continue
      if (reason === 'replied' && !(await this.d.sequences.in(workspaceId).get(e.sequenceId))?.exitOnReply) continue
      await this.d.actors.send(e.id, { type: 'enrolment.stop', at: this.d.clock.now(), reason })
    }
  }

  async stopWorkspace(workspaceId: string): Promise<void> {
    for (const e of await this.d.enrolments.in(workspaceId).find({ status: 'active' })) await this.d.actors.send(e.id, { type: 'enrolment.stop', at: this.d.clock.now(), reason: 'customer_deleted' })
  }

  effects(): EnrolmentEffectPort {
    const d = this.d
    return {
      sendStep: async ({ id, step }) => {
        const now = () => d.clock.now()
        // The enrolment actor knows only its id: the enrolment names its workspace.
        const e = await d.enrolments.acrossWorkspaces.get(id)
        const sequence = e ? await d.sequences.in(e.workspaceId).get(e.sequenceId) : null
        // Marked before sending: after a crash the step is not sent again (at most once).
        if (!e || !sequence || e.steps[String(step)]) return { at: now() }
        const mark = (value: string) => d.enrolments.acrossWorkspaces.update(id, { steps: { ...e.steps, [String(step)]: value } })
        await mark('sending')
        const outcome = await this.send(e, sequence, sequence.steps[step]!).catch((err: Error) => `skipped: ${err.message}`)
        await mark(outcome)
        return { at: now() }
      },
      project: async (id, snapshot) => {
        const c = snapshot.context
        const value = String(snapshot.value)
        await d.enrolments.acrossWorkspaces.update(id, {
          status: value === 'finished' ? 'finished' : value === 'stopped' ? 'stopped' : 'active',
          step: c.step,
          nextAt: value === 'waiting' ? iso(c.nextAt) : null,
          stopReason: c.stopReason,
        })
      },
    }
  }

  /** One step to the person, on the sequence agent's chat-app number; 'sent' or 'skipped: why'. */
  private async send(e: EnrolmentDoc, sequence: SequenceDoc, step: SequenceStep): Promise<string> {
    const d = this.d
    const number = (await d.numbers.list(e.workspaceId)).find((n) => n.channel === 'chatapp' && n.agentId === sequence.agentId)
    if (!number) return 'skipped: the agent has no chat-app number'
    const contact = await d.contacts.findByPhone(e.workspaceId, e.phone)
    if (!contact || contact.optedOut) return 'skipped: opted out'
    const conversation = await d.conversations.thread({
      workspaceId: e.workspaceId,
      agentId: sequence.agentId,
      channel: 'chatapp',
      customer: { id: contact.id, phone: e.phone },
      thread: `chatapp:${number.number}:${e.phone}`,
    })
    if (!(await d.meter.messagesLeft(e.workspaceId))) return "skipped: the plan's chat-app messages for this month are used up"
    // Paid plans: the wallet must cover the step's price (its category is known once the template is read).
    const unpaid = async (category: MessageCategory) => {
      const why = await d.meter.messageRefusal(e.workspaceId, category)
      if (why) d.logger?.warn({ enrolment: e.id, sequence: sequence.id, workspace: e.workspaceId, reason: why }, 'a sequence step was not sent: the account cannot pay for it')
      return why && `skipped: ${why}`
    }
    let text: string
    let sent: Sent
    let category: MessageCategory = 'service'
    if (step.template) {
      const template = await d.templates.forReply(e.workspaceId, number.number, step.template, undefined)
      const values = Array.from({ length: template.variableCount }, (_, i) => e.variables[String(i + 1)] ?? Object.values(e.variables)[i] ?? '')
      if (values.some((v) => v === '')) return `skipped: template ${template.name} needs ${template.variableCount} variables`
      text = template.body.replace(/\{\{\s*(\d+)\s*\}\}/g, (_, n: string) => values[Number(n) - 1] ?? '')
      category = template.category
      const refused = await unpaid(category)
      if (refused) return refused
      sent = await d.platform.send({ from: number.number, to: e.phone, content: { type: 'template', template: { name: template.name, language: template.language, variables: values } } })
    } else {
      const last = conversation.lastInboundAt ? Date.parse(conversation.lastInboundAt) : null
      if (last === null || d.clock.now() - last > WINDOW_MS) return "skipped: the customer's 24-hour window is closed for a text step"
      text = step.text!.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (_, name: string) => e.variables[name] ?? '')
      const refused = await unpaid(category)
      if (refused) return refused
      sent = await d.platform.send({ from: number.number, to: e.phone, content: { type: 'text', text } })
    }
    // Stored with its delivery in one write: a crash never keeps a sent message without it.
    const delivery = { platformMessageId: sent.platformMessageId, status: 'accepted', at: iso(d.clock.now()) }
    const { message } = await d.conversations.addMessage(conversation, { author: 'agent', parts: [{ type: 'text', text }], extra: { sequenceId: sequence.id, enrolmentId: e.id, delivery } })
    await d.meter.charge({
      id: `use_msg_${message.id}`,
      workspaceId: e.workspaceId,
      act: { kind: 'message', category },
      refs: { conversationId: conversation.id, messageId: message.id, sequenceId: sequence.id },
    })
    return 'sent'
  }
}
