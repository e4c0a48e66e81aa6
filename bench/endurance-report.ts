/**
 * bench:endurance's verdict, printed once the service has stopped: memory over the run, every answer
 * by status, and, read from the service's own store, every message, call and event of the run
 * against what this process saw (replies, webhook deliveries per endpoint).
 */
import { openStore } from '../src/store'
import type { CallStats } from './endurance-calls'
import { account, type Receiver, type RecordedEvent } from './endurance-hooks'
import type { Sample } from './endurance-samples'

const V1_TYPES = new Set(['lead.captured', 'conversation.escalated', 'conversation.resolved', 'call.completed', 'call.analysed', 'campaign.finished', 'message.received'])
/** The memory target: resident memory at the end of the load within this share of after 1 minute. */
const RSS_GROWTH_LIMIT = 0.1

export async function report(r: {
  /** Each endpoint's distinct events received by the first stop (the rest came after the restart). */
  firstStop: Map<Receiver, number>
  dir: string
  workspaceId: string
  agents: { answering: string; external: string; calling: string }
  samples: Sample[]
  drained: Sample
  statuses: Map<string, Map<number, number>>
  firstRefusals: Map<string, string>
  messages: { due: number; skipped: number; accepted: { messageId: string; conversationId: string; external: boolean }[] }
  replies: { asked: number; answered: number }
  calls: CallStats
  hooks: Record<'external' | 'legacy' | 'calls' | 'slow' | 'messaging', Receiver>
  campaign: { status: string; counts: Record<string, number> } | null
  recipients: number
  finalMetrics: string
  exit: string
  engines: string
}): Promise<void> {
  const store = await openStore({ dataDir: r.dir, sqliteLocking: 'shared' })
  const read = async (name: string) => (await store.collection<any>({ name, indexes: [] })).find({ workspaceId: r.workspaceId })
  const events = (await read('events')) as (RecordedEvent & { data: any })[]
  const messages = await read('messages')
  const tries = await read('call_tries')
  await store.close()
  const tally = <T>(xs: T[], key: (x: T) => string) => {
    const m = new Map<string, number>()
    for (const x of xs) m.set(key(x), (m.get(key(x)) ?? 0) + 1)
    return m
  }
  const show = (m: Map<string, number>) => [...m].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'

  console.log('\nresult')
  // Engines, from the call rows' pipeline.
  console.log(
    `  engines: ${r.engines}; calls ran on ${show(
      tally(
        tries.filter((t) => t.pipeline),
        (t) => `stt ${t.pipeline.stt} / tts ${t.pipeline.tts} / vad ${t.pipeline.vad}:`,
      ),
    )}`,
  )

  // Memory and lag.
  const atMinute = r.samples.find((s) => s.at >= 59) ?? r.samples[0]!
  const last = r.samples.at(-1)!
  const growth = (last.rssMb - atMinute.rssMb) / atMinute.rssMb
  const lags = r.samples.map((s) => s.lagP99Ms).sort((a, b) => a - b)
  console.log(
    `  resident memory: ${atMinute.rssMb.toFixed(0)} MB after ${atMinute.at.toFixed(0)} s → ${last.rssMb.toFixed(0)} MB after ${last.at.toFixed(0)} s (${growth >= 0 ? '+' : ''}${(100 * growth).toFixed(1)}%), ${r.drained.rssMb.toFixed(0)} MB once idle; heap ${atMinute.heapMb.toFixed(0)} → ${last.heapMb.toFixed(0)} MB (${r.drained.heapMb.toFixed(0)} idle)`,
  )
  console.log(
    `  event-loop lag p99 per 30 s window: median ${lags[Math.floor((lags.length - 1) / 2)]!.toFixed(0)} ms, worst ${lags.at(-1)!.toFixed(0)} ms; load average over the run ${r.samples.map((s) => s.load.split(' ')[0]).join(' ')}`,
  )

  // Every answer this process got, by status (0: the connection failed; -1: no answer in 30 s).
  let fiveXx = 0
  let noAnswer = 0
  console.log('  answers by status:')
  for (const [label, byStatus] of [...r.statuses].sort()) {
    for (const [s, n] of byStatus) {
      if (s >= 500) fiveXx += n
      if (s <= 0) noAnswer += n
    }
    console.log(
      `    ${label}: ${[...byStatus]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s} × ${n}`)
        .join(', ')}`,
    )
    for (const [s] of byStatus) if (r.firstRefusals.has(`${label} ${s}`)) console.log(`      first ${s}: ${r.firstRefusals.get(`${label} ${s}`)}`)
  }

  // Messages: each accepted one stored, answered once, its events recorded.
  const byId = new Map(messages.map((m) => [m.id, m]))
  const lostMessages = r.messages.accepted.filter((a) => byId.get(a.messageId)?.author !== 'customer').length
  const perConversation = new Map<string, { customer: number; agent: number }>()
  for (const m of messages) {
    const c = perConversation.get(m.conversationId) ?? { customer: 0, agent: 0 }
    if (m.author === 'customer') c.customer++
    else if (m.author === 'agent') c.agent++
    perConversation.set(m.conversationId, c)
  }
  // Only the chat-app conversations of the run (a call keeps its transcript in a conversation too).
  const externalConversations = new Set(r.messages.accepted.filter((a) => a.external).map((a) => a.conversationId))
  const answeredConversations = new Set(r.messages.accepted.filter((a) => !a.external).map((a) => a.conversationId))
  let unanswered = 0
  let extra = 0
  for (const [id, c] of perConversation) {
    if (!answeredConversations.has(id)) continue
    unanswered += Math.max(0, c.customer - c.agent)
    extra += Math.max(0, c.agent - c.customer)
  }
  const odd = [...perConversation].find(([id, c]) => answeredConversations.has(id) && c.agent !== c.customer)
  if (odd) {
    console.log(`  a conversation whose replies do not match its messages one for one (${odd[0]}):`)
    for (const m of messages.filter((m) => m.conversationId === odd[0]).sort((x, y) => x.createdAt.localeCompare(y.createdAt)))
      console.log(`    ${m.createdAt} ${m.author} ${m.id} delivery ${m.delivery?.status ?? 'none'}: ${JSON.stringify(m.parts).slice(0, 80)}`)
  }
  const agentReplies = messages.filter((m) => m.author === 'agent' && answeredConversations.has(m.conversationId))
  const externalIn = messages.filter((m) => m.author === 'customer' && externalConversations.has(m.conversationId))
  const externalOut = messages.filter((m) => m.author === 'agent' && externalConversations.has(m.conversationId))
  const once = (type: string, ids: string[]) => {
    const seen = tally(
      events.filter((e) => e.type === type),
      (e) => e.data.messageId,
    )
    return { missing: ids.filter((id) => !seen.has(id)).length, repeated: ids.filter((id) => (seen.get(id) ?? 0) > 1).length }
  }
  const completed = once(
    'chat.message.completed',
    agentReplies.map((m) => m.id),
  )
  const received = once(
    'message.received',
    externalIn.map((m) => m.id),
  )
  console.log(
    `  messages: ${r.messages.due} due, ${r.messages.accepted.length} accepted (201), ${r.messages.skipped} skipped by this process (2,000 already waiting); not in the store: ${lostMessages}; ${messages.filter((m) => m.author === 'customer' && (answeredConversations.has(m.conversationId) || externalConversations.has(m.conversationId))).length} customer messages stored (a POST given up on may still have been taken)`,
  )
  console.log(
    `    answered by the agent: ${agentReplies.length} replies; customer messages without a reply when the service stopped ${unanswered}, replies beyond one per message ${extra}; chat.message.completed missing ${completed.missing}, repeated ${completed.repeated}; deliveries ${show(tally(agentReplies, (m) => m.delivery?.status ?? 'none'))}`,
  )
  console.log(
    `    external agents: ${externalIn.length} received, message.received missing ${received.missing}, repeated ${received.repeated}; ${r.replies.asked} replies asked by this process (one per delivery), ${r.replies.answered} answered 2xx, ${externalOut.length} stored`,
  )

  // Calls: each placed call ended, with one call.completed and one call.analysed per try.
  const perTry = (type: string) =>
    tally(
      events.filter((e) => e.type === type),
      (e) => `${e.data.id}#${e.data.attempt}`,
    )
  const completedCalls = perTry('call.completed')
  const analysed = perTry('call.analysed')
  const voiceEnded = tally(
    events.filter((e) => e.type === 'voice.call.ended'),
    (e) => e.data.callId,
  )
  const placedTries = tries.filter((t) => r.calls.placed.includes(t.callId))
  const exactlyOnce = (m: Map<string, number>, key: (t: any) => string) => placedTries.filter((t) => m.get(key(t)) === 1).length
  console.log(
    `  calls: ${r.calls.placed.length} placed, ${r.calls.attached} streams attached (${r.calls.attachRetries} retried after 4409), ${r.calls.heard} heard the agent; attach failures ${r.calls.attachFailed.map((f) => `${f.code} × ${f.count}`).join(', ') || 'none'}; status callbacks not 204: ${show(new Map([...r.calls.callbackFailed].map(([s, n]) => [String(s), n])))}`,
  )
  console.log(
    `    tries ${placedTries.length}: ${show(tally(placedTries, (t) => t.status))}; exactly one call.completed ${exactlyOnce(completedCalls, (t) => `${t.callId}#${t.attempt}`)}, one call.analysed ${exactlyOnce(analysed, (t) => `${t.callId}#${t.attempt}`)}, one voice.call.ended ${exactlyOnce(voiceEnded, (t) => t.callId)}`,
  )

  // The campaign.
  const finished = events.filter((e) => e.type === 'campaign.finished').length
  console.log(`  campaign: ${r.campaign ? `${r.campaign.status}, counts ${JSON.stringify(r.campaign.counts)} of ${r.recipients}` : 'not started'}; campaign.finished events ${finished}`)

  // Webhooks: every recorded event against each endpoint's deliveries.
  const a = r.agents
  const subscriptions: [Receiver, (e: RecordedEvent) => boolean][] = [
    [r.hooks.external, (e) => V1_TYPES.has(e.type) && e.agentId === a.external],
    [r.hooks.messaging, (e) => V1_TYPES.has(e.type) && e.agentId === a.answering],
    [r.hooks.calls, (e) => V1_TYPES.has(e.type) && e.agentId === a.calling],
    [r.hooks.slow, (e) => V1_TYPES.has(e.type) && e.agentId === a.calling],
    [r.hooks.legacy, () => true],
  ]
  console.log(`  events recorded: ${events.length} (${show(tally(events, (e) => e.type))})`)
  let lost = 0
  let pending = 0
  let v1Duplicated = 0
  for (const [hook, subscribed] of subscriptions) {
    const acc = account(hook, events, subscribed)
    lost += acc.lost.length
    pending += acc.pending
    if (hook !== r.hooks.legacy) v1Duplicated += acc.duplicated
    console.log(
      `    ${acc.name}: ${acc.expected} expected, ${acc.received} received (${r.firstStop.get(hook)} by the first stop); not yet dispatched when the service stopped ${acc.pending}, lost ${acc.lost.length}${acc.lost.length ? ` (${acc.lost.slice(0, 3).join(', ')}…)` : ''}, duplicated ${acc.duplicated} (${acc.retried} of them numbered retries), unknown ids ${acc.unknown}`,
    )
  }
  const deliveries = [...r.finalMetrics.matchAll(/^agent_platform_webhook_deliveries_total\{([^}]*)\} (\S+)$/gm)].map((m) => `${m[1]!.replace(/"/g, '')} ${m[2]}`)
  console.log(`    the service's delivery counters: ${deliveries.join('; ') || 'none'}`)
  console.log(`  the service, after the load, ${r.exit}`)

  const memoryOk = growth <= RSS_GROWTH_LIMIT
  console.log(
    `  targets: resident memory within ${100 * RSS_GROWTH_LIMIT}% of after 1 minute — ${memoryOk ? 'met' : 'NOT MET'}; 5xx ${fiveXx} — ${fiveXx === 0 ? 'met' : 'NOT MET'} (and ${noAnswer} requests without an answer: failed connections or none in 30 s); events lost ${lost} (and ${pending} deliveries waiting on events not yet dispatched when the service stopped), v1 deliveries duplicated ${v1Duplicated}, messages lost ${lostMessages}, unanswered ${unanswered}`,
  )
}
