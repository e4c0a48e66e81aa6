/** What a new agent starts with (docs/spec.md Agent: "a newly created agent carries a starter persona"). */

import { DEFAULT_VOICE } from '../../catalog/voices'
import { newId, randomId } from '../../ids'
import { DEFAULT_DIALS } from '../../voice/public'
import type { AgentDoc } from './repository'

const starterLines = (name: string): string[] => [
  `You are ${name}, a friendly and concise assistant for this business.`,
  'Answer from the business knowledge you are given; when you do not know, say so plainly and offer to connect a person.',
  'Keep replies short: two or three sentences, one question at a time.',
  'Never invent prices, policies or promises.',
]

export const starterPersona = (name: string): string => starterLines(name).join('\n')

// The starter lines as patterns matching any agent name (the agent may have been renamed since).
const NAME_SLOT = '\u0000'
const STARTER_PATTERNS = starterLines(NAME_SLOT).map((line) => new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(NAME_SLOT, '.+')}$`))

/**
 * Whether `line` is one of the starter persona's sentences, unedited: how to behave, not a fact
 * about the business, so the system prompt keeps it apart from the business's own instructions.
 */
export const isStarterPersonaLine = (line: string): boolean => STARTER_PATTERNS.some((p) => p.test(line.trim()))

export const DEFAULTS = {
  greeting: 'Hi! How can I help you today?',
  businessDescription: '',
  temperature: 0.7,
  maxReplyTokens: 300,
  language: 'auto',
  escalation: { onNoAnswer: true, onRequest: true },
  captureLeads: true,
  scheduleCallbacks: false,
  widget: { theme: 'modern', accent: null, height: 600, welcomeScreen: true, welcomeCollectLeads: false, enabled: true },
  voice: {
    answersCalls: true,
    voice: DEFAULT_VOICE,
    language: null,
    summariseCalls: true,
    detectMachines: false,
    voicemailMessage: null,
    recordCalls: false,
    maxCallSeconds: null,
    endpointingMs: null,
    assemblyai: null,
    flux: { eotThreshold: null, eagerEotThreshold: null, eotTimeoutMs: null },
    ...structuredClone(DEFAULT_DIALS),
  },
} as const

/** A new agent's document with every default; the service applies the caller's fields on top. */
export function newAgentDoc(workspaceId: string, name: string, model: string, now: string): AgentDoc {
  return {
    id: newId('ag'),
    workspaceId,
    name,
    instructions: starterPersona(name),
    greeting: DEFAULTS.greeting,
    businessDescription: DEFAULTS.businessDescription,
    model,
    temperature: DEFAULTS.temperature,
    maxReplyTokens: DEFAULTS.maxReplyTokens,
    language: DEFAULTS.language,
    secondLanguage: null,
    escalation: { ...DEFAULTS.escalation },
    captureLeads: DEFAULTS.captureLeads,
    scheduleCallbacks: DEFAULTS.scheduleCallbacks,
    transfers: [],
    steps: [],
    widget: { ...DEFAULTS.widget },
    voice: { ...DEFAULTS.voice },
    collectFields: [],
    phoneNumber: null,
    webKey: `wk_${randomId(24)}`,
    createdAt: now,
    updatedAt: now,
  }
}
