/**
 * What a version freezes: the agent as docs/spec.md "Agent version (legacy)" lists it, as far as the
 * agent has each part, and how two snapshots differ (by field, for diffs; by console panel, for
 * `changed_fields`).
 *
 * Left out because the agent has no such setting (a snapshot records configuration, it does not
 * invent it): memory settings (memory is the conversation's recent messages, the same for every
 * agent: conversations/memory.ts), speech providers (speech engines belong to the workspace —
 * ours or its BYOK keys — not to an agent; its speed, patience and interruptions are in `voice`), website
 * domains and suggested prompts, a workflow graph, team members, prompt variables and actions.
 * Snapshots stored with empty placeholders for those read back in this shape (`reshape`).
 */
import { type AgentDoc, withDials } from '../agents/public'

export interface AgentSnapshot {
  core: {
    name: string
    model: string
    instructions: string
    greeting: string
    businessDescription: string
    temperature: number
    maxReplyTokens: number
    language: string
    secondLanguage: string | null
  }
  tools: { escalation: AgentDoc['escalation']; captureLeads: boolean; scheduleCallbacks: boolean; transfers: AgentDoc['transfers'] }
  knowledge: { documentIds: string[] }
  voice: AgentDoc['voice']
  widget: AgentDoc['widget']
  workflow: { steps: AgentDoc['steps'] }
  dataCollection: { collectFields: AgentDoc['collectFields'] }
}

/** Panels of the console, in order: what `changed_fields` names. */
export const PANELS = ['core', 'tools', 'knowledge', 'voice', 'widget', 'workflow', 'dataCollection'] as const
export type Panel = (typeof PANELS)[number]

export function captureSnapshot(agent: AgentDoc, knowledgeDocumentIds: string[]): AgentSnapshot {
  return structuredClone({
    core: {
      name: agent.name,
      model: agent.model,
      instructions: agent.instructions,
      greeting: agent.greeting,
      businessDescription: agent.businessDescription,
      temperature: agent.temperature,
      maxReplyTokens: agent.maxReplyTokens,
      language: agent.language,
      secondLanguage: agent.secondLanguage,
    },
    tools: { escalation: agent.escalation, captureLeads: agent.captureLeads, scheduleCallbacks: agent.scheduleCallbacks, transfers: agent.transfers ?? [] },
    knowledge: { documentIds: [...knowledgeDocumentIds].sort() },
    voice: agent.voice,
    widget: agent.widget,
    workflow: { steps: agent.steps },
    dataCollection: { collectFields: agent.collectFields },
  })
}

/** A stored snapshot (of any age) in the present shape: placeholder parts of older ones dropped. */
export function reshape(s: AgentSnapshot): AgentSnapshot {
  const { sttProvider, ttsProvider: _b, speed, interruption: _d, ...voice } = s.voice as AgentDoc['voice'] & Record<string, unknown>
  const { domains: _e, leadCapture: _f, suggestedPrompts: _g, ...widget } = s.widget as AgentDoc['widget'] & Record<string, unknown>
  const { agentType: _h, ...core } = s.core as AgentSnapshot['core'] & Record<string, unknown>
  return {
    core,
    // Snapshots from before transfers existed had none.
    tools: { escalation: s.tools.escalation, captureLeads: s.tools.captureLeads, scheduleCallbacks: s.tools.scheduleCallbacks, transfers: s.tools.transfers ?? [] },
    knowledge: { documentIds: s.knowledge.documentIds },
    // A placeholder snapshot's `speed` (beside `sttProvider`) was never a setting; the dials read as
    // their defaults in snapshots stored before they existed.
    voice: withDials({ ...voice, ...(sttProvider === undefined && speed !== undefined ? { speed } : {}) }),
    widget,
    workflow: { steps: s.workflow.steps },
    dataCollection: { collectFields: s.dataCollection.collectFields },
  }
}

/** The agent fields a snapshot restores (knowledge and the read-only parts stay as they are). */
export function agentFieldsOf(stored: AgentSnapshot): Partial<AgentDoc> {
  const s = reshape(stored)
  return {
    ...s.core,
    escalation: s.tools.escalation,
    captureLeads: s.tools.captureLeads,
    scheduleCallbacks: s.tools.scheduleCallbacks,
    transfers: s.tools.transfers,
    steps: s.workflow.steps,
    widget: s.widget,
    voice: s.voice,
    collectFields: s.dataCollection.collectFields,
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** `{ "core.instructions": { old, new }, … }` for every leaf that differs. */
export function diffSnapshots(older: AgentSnapshot, newer: AgentSnapshot): Record<string, { old: unknown; new: unknown }> {
  const [a, b] = [reshape(older), reshape(newer)]
  const changes: Record<string, { old: unknown; new: unknown }> = {}
  for (const panel of PANELS) {
    const left = a[panel] as Record<string, unknown>
    const right = b[panel] as Record<string, unknown>
    for (const key of new Set([...Object.keys(left), ...Object.keys(right)])) {
      if (!same(left[key], right[key])) changes[`${panel}.${key}`] = { old: left[key] ?? null, new: right[key] ?? null }
    }
  }
  return changes
}

export function changedPanels(a: AgentSnapshot, b: AgentSnapshot): Panel[] {
  const [left, right] = [reshape(a), reshape(b)]
  return PANELS.filter((p) => !same(left[p], right[p]))
}
