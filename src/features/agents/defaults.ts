/** What a new agent starts with (SPEC.md Agent: "a newly created agent carries a starter persona"). */
import { newId, randomId } from '../../ids'
import { DEFAULT_VOICE } from '../voices/catalogue'
import type { AgentDoc } from './repository'

export const starterPersona = (name: string): string =>
  [
    `You are ${name}, a friendly and concise assistant for this business.`,
    'Answer from the business knowledge you are given; when you do not know, say so plainly and offer to connect a person.',
    'Keep replies short: two or three sentences, one question at a time.',
    'Never invent prices, policies or promises.',
  ].join('\n')

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
    recordCalls: false,
    maxCallSeconds: null,
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
