/**
 * A live call's turn-taking as a chart (DESIGN.md: in memory only; audio-rate events never go
 * through the persisted actor queue). The voice session (src/media/session.ts) decides; this chart
 * mirrors each decision so the XState inspector (`INSPECT=1`) and `GET /console/actors/call:{id}`
 * show where the pipeline is: the agent opens, listens, thinks, speaks, is interrupted, ends.
 */
import { setup } from 'xstate'

export type VoiceTurnState = 'opening' | 'listening' | 'thinking' | 'speaking' | 'interrupted' | 'ended'
export type VoiceTurnEvent = { type: `to.${VoiceTurnState}` }

const to = (state: VoiceTurnState) => ({ [`to.${state}`]: { target: state } })
const anyOf = (...states: VoiceTurnState[]) => Object.assign({}, ...states.map(to))

export const voiceTurnMachine = setup({ types: { events: {} as VoiceTurnEvent } }).createMachine({
  id: 'voiceTurn',
  initial: 'opening',
  states: {
    opening: { on: anyOf('thinking', 'speaking', 'listening', 'ended') },
    listening: { on: anyOf('thinking', 'speaking', 'ended') },
    thinking: { on: anyOf('speaking', 'listening', 'interrupted', 'ended') },
    speaking: { on: anyOf('listening', 'interrupted', 'thinking', 'ended') },
    interrupted: { on: anyOf('thinking', 'speaking', 'listening', 'ended') },
    ended: { type: 'final' },
  },
})
