/**
 * What a version freezes: the whole agent as SPEC.md "Agent version (legacy)" lists it, and how
 * two snapshots differ (by field, for diffs; by console panel, for `changed_fields`).
 * Parts the product does not have yet (tools, memory, team members, prompt variables) are captured
 * as empty values so snapshots keep one shape as those arrive.
 */
import type { AgentDoc } from '../agents'

export interface AgentSnapshot {
  core: {
    name: string
    model: string
    instructions: string
    greeting: string
    businessDescription: string
    agentType: 'assistant'
    temperature: number
    maxReplyTokens: number
    language: string
    secondLanguage: string | null
  }
  tools: { escalation: AgentDoc['escalation']; captureLeads: boolean; scheduleCallbacks: boolean; actions: unknown[] }
  knowledge: { documentIds: string[] }
  voice: AgentDoc['voice'] & { sttProvider: string; ttsProvider: string; speed: number; interruption: boolean }
  memory: { enabled: boolean }
  widget: AgentDoc['widget'] & { domains: string[]; leadCapture: boolean; suggestedPrompts: string[] }
  workflow: { steps: AgentDoc['steps']; graph: null; teamMembers: string[] }
  variables: { name: string; default: string }[]
  dataCollection: { collectFields: AgentDoc['collectFields'] }
}

/** Panels of the console, in order: what `changed_fields` names. */
export const PANELS = ['core', 'tools', 'knowledge', 'voice', 'memory', 'widget', 'workflow', 'variables', 'dataCollection'] as const
export type Panel = (typeof PANELS)[number]

export function captureSnapshot(agent: AgentDoc, knowledgeDocumentIds: string[]): AgentSnapshot {
  return structuredClone({
    core: {
      name: agent.name,
      model: agent.model,
      instructions: agent.instructions,
      greeting: agent.greeting,
      businessDescription: agent.businessDescription,
      agentType: 'assistant' as const,
      temperature: agent.temperature,
      maxReplyTokens: agent.maxReplyTokens,
      language: agent.language,
      secondLanguage: agent.secondLanguage,
    },
    tools: { escalation: agent.escalation, captureLeads: agent.captureLeads, scheduleCallbacks: agent.scheduleCallbacks, actions: [] },
    knowledge: { documentIds: [...knowledgeDocumentIds].sort() },
    // Speech providers are the service's own until BYOK chooses others.
    voice: { ...agent.voice, sttProvider: 'service', ttsProvider: 'service', speed: 1, interruption: true },
    memory: { enabled: true },
    widget: { ...agent.widget, domains: [], leadCapture: agent.widget.welcomeCollectLeads, suggestedPrompts: [] },
    workflow: { steps: agent.steps, graph: null, teamMembers: [] },
    variables: [],
    dataCollection: { collectFields: agent.collectFields },
  })
}

/** The agent fields a snapshot restores (knowledge and the read-only parts stay as they are). */
export function agentFieldsOf(s: AgentSnapshot): Partial<AgentDoc> {
  const { sttProvider: _a, ttsProvider: _b, speed: _c, interruption: _d, ...voice } = s.voice
  const { domains: _e, leadCapture: _f, suggestedPrompts: _g, ...widget } = s.widget
  return {
    name: s.core.name,
    model: s.core.model,
    instructions: s.core.instructions,
    greeting: s.core.greeting,
    businessDescription: s.core.businessDescription,
    temperature: s.core.temperature,
    maxReplyTokens: s.core.maxReplyTokens,
    language: s.core.language,
    secondLanguage: s.core.secondLanguage,
    escalation: s.tools.escalation,
    captureLeads: s.tools.captureLeads,
    scheduleCallbacks: s.tools.scheduleCallbacks,
    steps: s.workflow.steps,
    widget,
    voice,
    collectFields: s.dataCollection.collectFields,
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** `{ "core.instructions": { old, new }, … }` for every leaf that differs. */
export function diffSnapshots(a: AgentSnapshot, b: AgentSnapshot): Record<string, { old: unknown; new: unknown }> {
  const changes: Record<string, { old: unknown; new: unknown }> = {}
  for (const panel of PANELS) {
    const left = a[panel] as Record<string, unknown> | unknown[]
    const right = b[panel] as Record<string, unknown> | unknown[]
    if (Array.isArray(left) || Array.isArray(right)) {
      if (!same(left, right)) changes[panel] = { old: left, new: right }
      continue
    }
    for (const key of new Set([...Object.keys(left), ...Object.keys(right)])) {
      if (!same(left[key], right[key])) changes[`${panel}.${key}`] = { old: left[key] ?? null, new: right[key] ?? null }
    }
  }
  return changes
}

export function changedPanels(a: AgentSnapshot, b: AgentSnapshot): Panel[] {
  return PANELS.filter((p) => !same(a[p], b[p]))
}
