/**
 * The call's pipeline as a value: the session composes its stages in flow order, and each stage
 * in it is the part that carries the call (not a label beside it).
 */
import { expect, test } from 'bun:test'
import { AgentTurns } from '../../src/media/agent-turns'
import { AgentVoice } from '../../src/media/agent-voice'
import { CallerAudio } from '../../src/media/caller-audio'
import { CallerWords } from '../../src/media/caller-words'
import { Playout } from '../../src/media/playout'
import { flush, turnHarness } from '../support/turn-harness'

test('the stages in the order frames go through them, each typed as its part', async () => {
  const h = turnHarness({ opening: 'Hello there.', msPerChar: 5 })
  const { pipeline } = h.session
  expect(pipeline.names).toEqual(['callerAudio', 'speechToText', 'agent', 'textToSpeech', 'playout'])
  const kinds = [CallerAudio, CallerWords, AgentTurns, AgentVoice, Playout]
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
