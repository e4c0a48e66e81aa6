/**
 * The call's pipeline as a value: its stages built and linked in flow order (pipeline.ts), each the
 * part that carries the call (not a label beside it), and the line's frames handed down through them.
 */
import { expect, test } from 'bun:test'
import { AgentTurns } from '../../src/voice/agent-turns'
import { AgentVoice } from '../../src/voice/agent-voice'
import { CallerAudio } from '../../src/voice/caller-audio'
import { CallerWords } from '../../src/voice/caller-words'
import type { OutboundFrame } from '../../src/voice/frames'
import { buildCallPipeline, type ChartSide } from '../../src/voice/pipeline'
import { Playout } from '../../src/voice/playout'
import type { SttSession } from '../../src/voice/ports/stt'
import type { TextToSpeech } from '../../src/voice/ports/tts'
import { AgentEcho } from '../../src/voice/turn-cues/agent-echo'
import type { VoiceActivity } from '../../src/voice/vad'
import { inertLine } from '../support/call-line'
import { flush, turnHarness } from '../support/turn-harness'

test('the stages in the order frames go through them, each typed as its part', async () => {
  const h = turnHarness({ opening: 'Hello there.', msPerChar: 5 })
  const { pipeline } = h.session
  expect(pipeline.names).toEqual(['callerAudio', 'speechToText', 'agent', 'textToSpeech', 'playout', 'agentEcho'])
  const kinds = [CallerAudio, CallerWords, AgentTurns, AgentVoice, Playout, AgentEcho]
  for (const [i, { stage }] of pipeline.stages.entries()) expect(stage).toBeInstanceOf(kinds[i]!)
  await h.session.close()
})

test('the stages are the ones the call runs on: the opening plays through the playout stage, the caller through the audio stage', async () => {
  const h = turnHarness({ opening: 'Hello there, this is the shop.', msPerChar: 5 })
  const { pipeline } = h.session
  h.session.start(8000)
  await flush()
  await h.wait(20)
  expect(pipeline.stage('playout').speaking).toBe(true)
  await h.wait(1_000)
  expect(pipeline.stage('playout').speaking).toBe(false)
  const judged = pipeline.stage('callerAudio').judgedUpTo
  await h.speak(300, 'hello')
  expect(pipeline.stage('callerAudio').judgedUpTo).toBeGreaterThan(judged)
  expect(pipeline.stage('speechToText').heard).toBe('hello')
  await h.session.close()
})

test('built on its own, the pipeline takes the line’s frames and hands them down as frames: audio to the STT, speech and keys to the chart’s side, marks to the playout', async () => {
  const told: string[] = []
  const sttAudio: { samples: number; streamMs: number | undefined }[] = []
  let speechWindows = 0
  const sent: OutboundFrame[] = []
  const chart: ChartSide = {
    over: () => false,
    speechStarted: () => void told.push('speech.start'),
    speechGoesOn: () => void told.push('speech.onset'),
    speechPaused: () => void told.push('speech.pause'),
    heard: (text) => void told.push(`heard ${text}`),
    key: (digit) => void told.push(`key ${digit}`),
    replySent: () => void told.push('reply.audio'),
    agentStopped: () => void told.push('agent.stopped'),
    played: () => void told.push('played'),
    ttsFailed: () => void told.push('tts failed'),
  }
  const vad: VoiceActivity = {
    name: 'energy',
    push: async (pcm) => Array.from({ length: pcm.length / 160 }, (_, i) => ({ speech: pcm[i * 160] !== 0, ms: 20, end: (i + 1) * 160 })),
    reset() {},
  }
  const stt: SttSession = {
    sampleRate: 16_000,
    capabilities: { streaming: false, interimWords: false, punctuation: true, endOfTurn: false, eagerEndOfTurn: false, wordTimings: false },
    push: (pcm, streamMs) => void sttAudio.push({ samples: pcm.length, streamMs }),
    speech: () => void speechWindows++,
    finalize: async () => '',
    close: async () => {},
  }
  const tts: TextToSpeech = {
    name: 'instant',
    sampleRate: 8000,
    async *synthesize(text) {
      yield new Int16Array(text.length * 8).fill(500)
    },
  }
  const line = inertLine()
  let now = 0
  const pipeline = buildCallPipeline({ line, vad, stt, tts, send: (f) => sent.push(f) > 0 }, chart, { now: () => now })
  for (let i = 0; i < 6; i++) {
    now += 20
    pipeline.push({ kind: 'audio', pcm: new Int16Array(160).fill(3000), sampleRate: 8000, chunk: i, timestamp: now })
    await flush()
  }
  pipeline.push({ kind: 'dtmf', digit: '5' })
  // The caller's audio reached the engine at its rate, stamped with its place in the stream; each
  // window of speech told it the caller speaks.
  expect(sttAudio).toHaveLength(6)
  expect(sttAudio[0]).toEqual({ samples: 320, streamMs: 20 })
  expect(speechWindows).toBe(6)
  expect(told[0]).toBe('speech.start')
  expect(new Set(told.slice(1, -1))).toEqual(new Set(['speech.onset']))
  expect(told.at(-1)).toBe('key 5')
  expect(pipeline.stage('callerAudio').judgedUpTo).toBe(120)
  // The agent's turn plays out through the playout stage to the line; the line's mark comes back through the pipeline's head.
  pipeline.stage('agent').say('Hello.')
  await flush()
  const mark = sent.find((f) => f.kind === 'mark')
  expect(sent[0]?.kind).toBe('audio')
  expect(mark?.kind).toBe('mark')
  expect(told).toContain('reply.audio')
  if (mark?.kind === 'mark') pipeline.push({ kind: 'mark', name: mark.name })
  pipeline.stage('agent').close()
  await pipeline.stage('agent').stored
  expect(told).toContain('played')
})
