/** The metrics module on its own: instances never mix, sampled sources add up or drop out, turns by stage. */
import { describe, expect, test } from 'bun:test'
import { Metrics } from '../../src/metrics'
import { capturedLogger } from '../support/log-capture'

const line = (text: string, prefix: string) => text.split('\n').find((l) => l.startsWith(prefix))

describe('Metrics', () => {
  test('two instances in one process keep their own counts; process metrics appear in both', async () => {
    const a = new Metrics(capturedLogger().logger)
    const b = new Metrics(capturedLogger().logger)
    a.callsPlaced.inc({ direction: 'outbound' })
    expect(line(await a.scrape(), 'agent_platform_calls_placed_total{direction="outbound"}')).toEndWith(' 1')
    const other = await b.scrape()
    expect(line(other, 'agent_platform_calls_placed_total{direction="outbound"}')).toEndWith(' 0')
    expect(line(other, 'nodejs_eventloop_lag_seconds ')).toBeDefined()
  })

  test('sampled sources add up; a failing one is logged and left out of that scrape', async () => {
    const { logger, lines } = capturedLogger('warn')
    const m = new Metrics(logger)
    m.mediaSessions.from(() => 2)
    m.mediaSessions.from(async () => 3)
    m.actorsLive.from(() => [{ labels: { kind: 'call' }, value: 4 }])
    m.actorsLive.from(() => {
      throw new Error('store down')
    })
    const text = await m.scrape()
    expect(line(text, 'agent_platform_media_sessions ')).toBe('agent_platform_media_sessions 5')
    expect(line(text, 'agent_platform_actors_live{kind="call"}')).toBe('agent_platform_actors_live{kind="call"} 4')
    expect(lines.some((l) => l.msg === 'a metric could not be read' && l.metric === 'agent_platform_actors_live')).toBe(true)
  })

  test('a voice turn is observed per stage, in seconds; a stage that did not happen is left out', async () => {
    const m = new Metrics(capturedLogger().logger)
    m.voiceTurn({ endpointingMs: 300, sttMs: 40, sttQueueMs: null, llmFirstTokenMs: null, ttsFirstByteMs: null, toFirstAudioMs: 500, toFirstHeardMs: 560 })
    const text = await m.scrape()
    expect(line(text, 'agent_platform_turn_latency_seconds_sum{stage="endpointing"}')).toEndWith(' 0.3')
    expect(line(text, 'agent_platform_turn_latency_seconds_count{stage="to_first_heard"}')).toEndWith(' 1')
    expect(line(text, 'agent_platform_turn_latency_seconds_count{stage="llm_first_token"}')).toBeUndefined()
  })
})
