import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../src/config'

describe('config', () => {
  test('defaults', () => {
    const c = loadConfig({})
    expect(c.port).toBe(3000)
    expect(c.clock).toBe('system')
    expect(c.telephonyProvider).toBe('sandbox')
    expect(c.allowPrivateWebhookTargets).toBe(false)
    expect(c.mongodbUrl).toBeUndefined()
    expect(c.redisUrl).toBeUndefined()
    expect(c.dataDir.endsWith('/data')).toBe(true)
    // Unset: the platform's own default (80/s on WhatsApp, unpaced on the sandbox).
    expect(c.campaignSendRate).toBeUndefined()
    expect(loadConfig({ CAMPAIGN_SEND_RATE: '12.5' }).campaignSendRate).toBe(12.5)
    expect(loadConfig({ CAMPAIGN_SEND_RATE: '0' }).campaignSendRate).toBe(0)
    expect(c.drainSeconds).toBe(300)
    expect(loadConfig({ DRAIN_SECONDS: '0' }).drainSeconds).toBe(0)
    expect(loadConfig({ DRAIN_SECONDS: '3600' }).drainSeconds).toBe(3600)
    expect(loadConfig({}).httpIdleSeconds).toBe(30)
    expect(loadConfig({ HTTP_IDLE_SECONDS: '255' }).httpIdleSeconds).toBe(255)
  })
  test('a bad value stops boot with a message naming the variable', () => {
    const bad: [Record<string, string>, string][] = [
      [{ PORT: 'eighty' }, 'PORT'],
      [{ PORT: '70000' }, 'PORT'],
      [{ SERVICE_CLOCK: 'fast' }, 'SERVICE_CLOCK'],
      [{ TELEPHONY_PROVIDER: 'carrier-pigeon' }, 'TELEPHONY_PROVIDER'],
      [{ TELEPHONY_PROVIDER: 'telnyx', TELNYX_API_KEY: 'KEY1', TELNYX_CONNECTION_ID: '1' }, 'TELEPHONY_PROVIDER'],
      [{ TELEPHONY_PROVIDER: 'telnyx', TELNYX_API_KEY: 'KEY1', TELNYX_PUBLIC_KEY: 'k', TELNYX_CONNECTION_ID: '1', TELNYX_API_BASE_URL: 'ftp://x' }, 'TELNYX_API_BASE_URL'],
      [{ MONGODB_URL: 'http://x' }, 'MONGODB_URL'],
      [{ REDIS_URL: 'not a url' }, 'REDIS_URL'],
      [{ CONSOLE_TOKEN: 'short' }, 'CONSOLE_TOKEN'],
      [{ SECRET_KEY: 'short' }, 'SECRET_KEY'],
      [{ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'maybe' }, 'ALLOW_PRIVATE_WEBHOOK_TARGETS'],
      [{ PUBLIC_BASE_URL: 'ftp://x' }, 'PUBLIC_BASE_URL'],
      [{ ASSEMBLYAI_BASE_URL: 'https://streaming.assemblyai.com' }, 'ASSEMBLYAI_BASE_URL'],
      [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
      [{ CAMPAIGN_SEND_RATE: 'fast' }, 'CAMPAIGN_SEND_RATE'],
      [{ CAMPAIGN_SEND_RATE: '-5' }, 'CAMPAIGN_SEND_RATE'],
      [{ CAMPAIGN_SEND_RATE: '20000' }, 'CAMPAIGN_SEND_RATE'],
      [{ DRAIN_SECONDS: '2.5' }, 'DRAIN_SECONDS'],
      [{ DRAIN_SECONDS: '-1' }, 'DRAIN_SECONDS'],
      [{ DRAIN_SECONDS: '3601' }, 'DRAIN_SECONDS'],
      [{ HTTP_IDLE_SECONDS: '0' }, 'HTTP_IDLE_SECONDS'],
      [{ HTTP_IDLE_SECONDS: '256' }, 'HTTP_IDLE_SECONDS'],
      [{ AUTH_FAILURES_PER_MINUTE: '-1' }, 'AUTH_FAILURES_PER_MINUTE'],
      [{ VISITOR_SESSIONS_PER_MINUTE: 'many' }, 'VISITOR_SESSIONS_PER_MINUTE'],
    ]
    for (const [env, name] of bad) {
      let caught: unknown
      try {
        loadConfig(env)
      } catch (e) {
        caught = e
      }
      expect(caught).toBeInstanceOf(ConfigError)
      expect((caught as ConfigError).variable).toBe(name)
      expect((caught as Error).message).toStartWith(`${name}:`)
    }
  })
  test('OPENAI_BASE_URL: https, or plain http only to this machine (the adapter’s rule)', () => {
    expect(loadConfig({}).providers.openaiBaseUrl).toBeUndefined()
    expect(loadConfig({ OPENAI_BASE_URL: 'https://llm.example.com/v1/' }).providers.openaiBaseUrl).toBe('https://llm.example.com/v1')
    expect(loadConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }).providers.openaiBaseUrl).toBe('http://127.0.0.1:11434/v1')
    for (const bad of ['http://llm.example.com/v1', 'not a url', 'https://user:pw@llm.example.com/v1', 'ftp://llm.example.com']) {
      let caught: unknown
      try {
        loadConfig({ OPENAI_BASE_URL: bad })
      } catch (e) {
        caught = e
      }
      expect(caught).toBeInstanceOf(ConfigError)
      expect((caught as Error).message).toStartWith('OPENAI_BASE_URL:')
    }
  })
  test('the process exits with the message when started with a bad value', async () => {
    const proc = Bun.spawn([process.execPath, 'src/index.ts'], { env: { ...process.env, PORT: 'eighty' }, stderr: 'pipe', stdout: 'pipe' })
    const code = await proc.exited
    expect(code).toBe(2)
    expect(await new Response(proc.stderr).text()).toContain('PORT')
  })
})
