/** What a new agent starts with (SPEC.md Agent: "a newly created agent carries a starter persona"). */
import { DEFAULT_VOICE } from '../voices/catalogue'

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
