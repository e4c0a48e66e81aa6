/**
 * A 400 names the body field the caller sent, as `<field>: …` with `field` beside it (docs/spec.md
 * Errors rule 1): the console's inbound names `text` (its body has no `message`), and the reply's
 * "one of" rule names the body it is about.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }
let agent: string
let webKey: string

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale' })
  ;({ id: agent, webKey } = await s.agent(dev.key, { name: 'Bean There' }))
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550700', source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
})
afterAll(() => s?.stop())

const inbound = (body: Record<string, unknown>) => s.console('POST', `/workspaces/${dev.id}/inbound`, body)

describe('the console’s inbound names `text`', () => {
  test('website chat: a blank text, and one over the widget’s 4,000 characters', async () => {
    const blank = await inbound({ channel: 'web', from: 'visitor-1', to: agent, text: '   ' })
    expect(blank.status).toBe(400)
    expect(blank.body).toEqual({ error: 'text: must not be blank', field: 'text' })
    const long = await inbound({ channel: 'web', from: 'visitor-1', to: agent, text: 'x'.repeat(4_001) })
    expect(long.status).toBe(400)
    expect(long.body).toEqual({ error: 'text: must be at most 4000 characters', field: 'text' })
    // The widget's own route names its own field.
    const widget = await fetch(`${s.url}/api/v1/web/${webKey}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    const { session } = (await widget.json()) as { session: string }
    const said = await fetch(`${s.url}/api/v1/web/${webKey}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session, message: '   ' }) })
    expect(said.status).toBe(400)
    expect(await said.json()).toEqual({ error: 'message: must not be blank', field: 'message' })
  })

  test('the other channels name it too', async () => {
    for (const body of [
      { channel: 'chatapp', from: '+14155550701', text: '  ' },
      { channel: 'email', from: 'ana@example.com', to: agent, text: '  ' },
    ]) {
      const r = await inbound(body)
      expect(r.status).toBe(400)
      expect(r.body).toEqual({ error: 'text: must not be blank', field: 'text' })
    }
  })
})

describe('POST /conversations/{id}/reply: one of text, media, form or template', () => {
  let conversation: string
  beforeAll(async () => {
    const r = await inbound({ channel: 'chatapp', from: '+14155550702', text: 'Hello' })
    expect(r.status).toBe(201)
    conversation = r.body.conversationId
  })
  const reply = (body: unknown) => s.api('POST', `/conversations/${conversation}/reply`, { key: dev.key, body })

  test('none of them: a 400 that starts with the field it names', async () => {
    const r = await reply({})
    expect(r.status).toBe(400)
    expect(r.body).toEqual({ error: 'body: send one of text, media, form or template', field: 'body' })
  })

  test('two of them: the same, saying which were given', async () => {
    const r = await reply({ text: 'a', form: 'booking' })
    expect(r.status).toBe(400)
    expect(r.body).toEqual({ error: 'body: send one of text, media, form or template, not text and form', field: 'body' })
  })
})
