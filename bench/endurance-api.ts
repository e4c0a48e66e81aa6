/**
 * bench:endurance's developer traffic: API reads and writes at a steady rate beside the load, in
 * turn — an agent read and PATCH, the calls and conversations lists and one of each the run made,
 * a scratch webhook created and deleted, the campaign once it exists.
 */

/** A request of the developer's, counted under `label`. */
export type Api = (label: string, method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>

export interface ApiTrafficParts {
  api: Api
  /** Requests a second. */
  rate: number
  /** performance.now() at which the load stops. */
  until: number
  /** Seconds since the load started. */
  elapsed: () => number
  /** The agent read, and the one patched and given scratch webhooks. */
  agents: { read: string; scratch: string }
  /** Where the scratch webhooks point. */
  hookUrl: string
  /** The latest call and conversation the run made, and its campaign (until each exists, the lists are read again). */
  lastCall: () => string | undefined
  lastConversation: () => string | undefined
  campaign: () => string | null
}

export async function runApiTraffic(p: ApiTrafficParts): Promise<void> {
  const { api, agents } = p
  let webhookPair = false
  const apiCalls: (() => Promise<unknown>)[] = [
    () => api('GET /api/v1/agents/{id}', 'GET', `/api/v1/agents/${agents.read}`),
    () => api('PATCH /api/v1/agents/{id}', 'PATCH', `/api/v1/agents/${agents.scratch}`, { name: `Scratch ${Math.floor(p.elapsed())}` }),
    () => api('GET /api/v1/calls', 'GET', '/api/v1/calls?limit=25'),
    // Reads of one call or conversation wait for the first the run made (until then, the lists again).
    () => {
      const id = p.lastCall()
      return id ? api('GET /api/v1/calls/{id}', 'GET', `/api/v1/calls/${id}`) : api('GET /api/v1/calls', 'GET', '/api/v1/calls?limit=1')
    },
    () => api('GET /api/v1/conversations', 'GET', '/api/v1/conversations?limit=25'),
    () => {
      const id = p.lastConversation()
      return id ? api('GET /api/v1/conversations/{id}/messages', 'GET', `/api/v1/conversations/${id}/messages?limit=25`) : api('GET /api/v1/conversations', 'GET', '/api/v1/conversations?limit=1')
    },
    async () => {
      // One scratch webhook at a time: overlapping pairs would meet the 20-per-agent limit (409).
      if (webhookPair) return
      webhookPair = true
      const made = await api('POST /api/v1/webhooks', 'POST', '/api/v1/webhooks', { agent: agents.scratch, url: p.hookUrl, events: ['lead.captured'] })
      if (made.status === 201) await api('DELETE /api/v1/webhooks/{id}', 'DELETE', `/api/v1/webhooks/${made.body.id}`)
      webhookPair = false
    },
    () => {
      const campaign = p.campaign()
      return campaign ? api('GET /api/v1/campaigns/{id}', 'GET', `/api/v1/campaigns/${campaign}`) : api('GET /api/v1/phone-numbers', 'GET', '/api/v1/phone-numbers')
    },
  ]
  for (let n = 0; performance.now() < p.until; n++) {
    void apiCalls[n % apiCalls.length]!()
    await Bun.sleep(1000 / p.rate)
  }
}
