/**
 * Plays a run (the run actor's `playScenarios`, while it is `running`): places each call not judged
 * yet through the calls feature (a simulated call: the same call actor as a real one, its callee a
 * scripted sandbox caller), watches its row until it is analysed, judges it (judge.ts) and writes
 * the result; reports the run's counts to its actor after each. A `web` or `chatapp` scenario is a
 * chat instead: its lines are written one by one through that channel's own path
 * (`WebChat.simulated`, `InboundMessages.simulated`), the chat analysed for fields as a call is,
 * then judged the same way.
 * It reads everything from the rows, so after a crash it carries on where they say: a call that
 * was in progress was dropped by the restart (the sandbox network's calls live in the process)
 * and is placed again; a chat in progress starts over as a new visitor.
 */
import type { Clock } from '../../clock'
import { crashPoint } from '../../crash-points'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Logger } from '../../logger'
import type { LanguageModel } from '../../providers/llm'
import { summariseLatency } from '../../voice/public'
import type { AgentDoc, AgentService } from '../agents/public'
import type { CallService, CallTryDoc } from '../calls/public'
import type { ConversationFeature } from '../conversations/public'
import { type CallFacts, judge } from './judge'
import { type HeardLine, PersonaCaller, PersonaError } from './persona-caller'
import { type CallReplays, replayedCaller } from './replay'
import type { AnswerTime, Line, ResultDoc, RunDoc, ScenarioDoc, SimulationStore } from './repository'
import { calleeLine } from './scenario-checks'

/**
 * Calls a run has in progress at once: the issue's scale (50 six-turn calls). bench:simulations
 * measures what that costs (docs/benchmarks.md): ~0.66 s of service CPU per six-turn call, so 50 at
 * once ask about half a core over their minute of audio — on a host that has it to give.
 */
export const RUN_PARALLEL = 50
/** How often a run looks at its calls in progress (one row read each): a call's end shows within this. */
const POLL_MS = 200
/**
 * A scripted caller hangs up once the agent has answered its last line, or after this much real
 * time: 30 lines of a few seconds each and the agent's answers fit well inside three minutes.
 */
export const SCRIPT_LIMIT_MS = 180_000
/** Placings of one call in all: a call dropped by a restart is placed again, twice at most. */
const MAX_ATTEMPTS = 3

export interface RunnerDeps {
  store: SimulationStore
  /** A scenario from a call: its recording's caller audio, read when each of its calls is placed. */
  replays: Pick<CallReplays, 'audio'>
  calls: () => CallService
  agents: Pick<AgentService, 'get'>
  conversations: Pick<ConversationFeature['conversations'], 'history'>
  workspace: (id: string) => Promise<WorkspaceDoc | null>
  clock: Clock
  logger: Logger
  /** Whether the server listens: a scripted callee dials the media bridge, so a run resumed at boot waits for it. */
  listening: () => boolean
  /** The agent as a run targets it: the draft as it is now, or the version (live or not); null when gone. */
  target: (workspaceId: string, agentId: string, target: 'draft' | number) => Promise<AgentDoc | null>
  /** A website visitor's (web) or chat-app customer's (chatapp) line, written and answered through that channel's simulated customer. */
  chat: (channel: 'web' | 'chatapp', workspace: WorkspaceDoc, agent: AgentDoc, customer: { key: string; phone: string }, text: string) => Promise<{ conversationId: string; reply: string }>
  /** The model that plays a persona caller: the agent's own, as its conversations resolve it (BYOK first). */
  callerModel: (workspace: WorkspaceDoc, agent: AgentDoc) => Promise<LanguageModel>
  /** The agent's `collectFields` read from a chat's transcript, as a call's analysis reads them. */
  fields: (workspace: WorkspaceDoc, agent: AgentDoc, transcript: Line[]) => Promise<Record<string, unknown>>
}

/** A caller's number from the run's seed and the call's place (E.164, the 555 range). */
export function callerNumber(seed: number, index: number): string {
  let x = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) >>> 0
  x = (x ^ (x >>> 16)) >>> 0
  return `+1555${String(x % 10_000_000).padStart(7, '0')}`
}

/**
 * Each caller turn the call timed: its words (the caller's lines in order, one timed turn each),
 * the silence the agent waited before taking the turn and the ms from the end of its speech to
 * the agent's first audio (the call record's `endpointingMs` and `toFirstAudioMs`: on the manual
 * clock, ms of the caller's audio).
 */
function answerTimes(row: CallTryDoc, transcript: Line[]): AnswerTime[] {
  const said = transcript.filter((l) => l.speaker === 'customer')
  return (row.latencyTurns ?? []).map((t, i) => ({ caller: said[i]?.text ?? null, waitedMs: t.endpointingMs, answerMs: t.toFirstAudioMs }))
}

const dropped = (row: CallTryDoc) => row.hangup === 'failed' && /dropped/.test(row.error ?? '')
const ENDED = new Set(['completed', 'missed', 'failed', 'cancelled'])

export class SimulationRunner {
  /** A phone call's persona caller whose model failed, by result id: the reason its result fails with. */
  private readonly personaFailures = new Map<string, string>()

  constructor(private readonly d: RunnerDeps) {}

  play(runId: string, progress: (counts: { finished: number; passed: number; failed: number }) => void): () => void {
    let stopped = false
    this.loop(runId, progress, () => stopped).catch((err) => this.d.logger.warn({ err, run: runId }, 'a simulation run stopped on an error; it carries on at the next start'))
    return () => {
      stopped = true
    }
  }

  private async loop(runId: string, progress: (counts: { finished: number; passed: number; failed: number }) => void, stopped: () => boolean): Promise<void> {
    const { store } = this.d
    const run = await store.runs.get(runId)
    if (!run) return
    const workspace = await this.d.workspace(run.workspaceId)
    const agent = await this.d.agents.get(run.workspaceId, run.agentId).catch(() => null)
    const all = await store.results.find({ runId }, { sort: [['index', 1]] })
    const report = () => {
      const passed = all.filter((r) => r.status === 'passed').length
      const failed = all.filter((r) => r.status === 'failed').length
      progress({ finished: passed + failed, passed, failed })
    }
    report()
    while (!this.d.listening() && !stopped()) await Bun.sleep(POLL_MS)
    const queue = all.filter((r) => r.status === 'pending' || r.status === 'calling')
    const inFlight = new Set<ResultDoc>()
    const chats = new Set<Promise<void>>()
    const write = async (r: ResultDoc, set: Partial<ResultDoc>) => {
      Object.assign(r, set)
      await store.results.update(r.id, set)
    }
    const fail = async (r: ResultDoc, error: string) => {
      await write(r, { status: 'failed', error })
      report()
    }
    const converse = async (r: ResultDoc, scenario: ScenarioDoc) => {
      // A chat a restart cut short starts over as a new visitor; one cut short every time is not retried forever.
      if (r.attempts >= MAX_ATTEMPTS) return fail(r, `the chat was interrupted ${r.attempts} times (restarts)`)
      await write(r, { status: 'calling', attempts: r.attempts + 1 })
      const outcome = await this.chatted(run, r, scenario, workspace!, stopped).catch(
        (err: Error): Partial<ResultDoc> => ({ status: 'failed', transcript: [], expectations: [], call: null, error: `the chat stopped: ${err.message}` }),
      )
      // Cancelled meanwhile: the cancel wrote this result.
      if (stopped()) return
      await write(r, outcome)
      crashPoint('simulation.result.written')
      report()
    }
    const place = async (r: ResultDoc) => {
      const scenario = run.scenarios[Math.floor(r.index / run.count)]!
      if (!workspace || !agent) return fail(r, 'the run’s agent or workspace is gone')
      if (scenario.channel !== 'phone') {
        const chat: Promise<void> = converse(r, scenario)
          .catch((err) => this.d.logger.warn({ err, run: runId }, 'a simulated chat could not be written'))
          .finally(() => chats.delete(chat))
        chats.add(chat)
        return
      }
      try {
        const more = scenario.caller.persona !== undefined ? await this.spoken(run, r, workspace, scenario) : undefined
        const script = await this.script(workspace, scenario)
        if ('gone' in script) return fail(r, `the replayed call’s caller cannot be played: ${script.gone}`)
        const callId = await this.d.calls().placeSimulated(workspace, agent, {
          to: callerNumber(run.seed, r.index),
          variables: scenario.variables,
          simulation: { runId, target: run.target, webhooks: run.webhooks },
          caller: { ...script, limitMs: SCRIPT_LIMIT_MS, ...(more ? { more: more.next } : {}) },
        })
        more?.placed(callId)
        // Cancelled while it was being placed: the cancel could not see this call, so it ends here.
        if (stopped()) {
          await this.d
            .calls()
            .end(workspace, callId)
            .catch(() => {})
          return write(r, { status: 'cancelled', callId, attempts: r.attempts + 1, error: 'the run was cancelled' })
        }
        await write(r, { status: 'calling', callId, attempts: r.attempts + 1 })
        inFlight.add(r)
      } catch (err) {
        if (err instanceof PersonaError) await fail(r, err.message)
        else await fail(r, `the call could not be placed: ${(err as Error).message}`)
      }
    }
    while (!stopped() && (queue.length > 0 || inFlight.size > 0 || chats.size > 0)) {
      while (!stopped() && inFlight.size + chats.size < RUN_PARALLEL && queue.length > 0) {
        const r = queue.shift()!
        if (r.status === 'calling' && r.callId) inFlight.add(r)
        else await place(r)
      }
      await Bun.sleep(POLL_MS)
      for (const r of [...inFlight]) {
        if (stopped()) return
        const row = await this.d.calls().row(r.callId!)
        if (!row || !ENDED.has(row.status) || row.analysedAt === null) continue
        inFlight.delete(r)
        if (dropped(row) && r.attempts < MAX_ATTEMPTS) await place(r)
        else {
          await write(r, await this.judged(run, r, row))
          crashPoint('simulation.result.written')
          report()
        }
      }
    }
  }

  /**
   * The callee's script; for a scenario from a call, with the clips of the call's recording it
   * plays, read now from the workspace's storage (a recording deleted since is said, never played).
   */
  private async script(workspace: WorkspaceDoc, scenario: ScenarioDoc): Promise<{ lines: string[]; clips?: Int16Array[] } | { gone: string }> {
    const lines = scenario.caller.lines ?? []
    if (!scenario.replayOf) return { lines: lines.map(calleeLine) }
    const audio = await this.d.replays.audio(workspace.id, scenario.replayOf)
    if ('gone' in audio) return audio
    try {
      return replayedCaller(lines, audio.pcm, calleeLine)
    } catch (err) {
      return { gone: (err as Error).message }
    }
  }

  /** The result of a call that was analysed: its transcript, each expectation judged, the call's links. */
  private async judged(run: RunDoc, r: ResultDoc, row: CallTryDoc): Promise<Partial<ResultDoc>> {
    const scenario: ScenarioDoc = run.scenarios[Math.floor(r.index / run.count)]!
    const first = row.transcript[0] ? Date.parse(row.transcript[0].at) : 0
    const transcript: Line[] = row.transcript.map((l) => ({ speaker: l.speaker, text: l.text, atMs: Date.parse(l.at) - first }))
    const history = row.conversationId ? await this.d.conversations.history(row.conversationId, 500) : []
    const tools = history.flatMap((m) => (m.tools ?? []).map((t) => t.name))
    const facts: CallFacts = {
      transcript,
      fields: row.fields ?? {},
      tools,
      endedBy: tools.includes('end_call') ? 'agent' : row.hangup === 'answered' ? 'caller' : null,
      hangup: row.hangup,
    }
    const call = { id: row.callId, recording: row.recording?.url ?? null, hangup: row.hangup, latency: summariseLatency(row.latencyTurns ?? []), turns: answerTimes(row, transcript) }
    const outcome = { conversation: row.conversationId ?? null, fields: facts.fields, tools }
    // The persona caller's model failed: the call ended for that, whatever else it shows.
    const personaFailed = this.personaFailures.get(r.id)
    this.personaFailures.delete(r.id)
    if (personaFailed) return { status: 'failed', transcript, expectations: [], call, ...outcome, error: personaFailed }
    if (row.status !== 'completed' || row.hangup === 'failed') {
      return { status: 'failed', transcript, expectations: [], call, ...outcome, error: `the call ended ${row.status}${row.hangup ? ` (${row.hangup})` : ''}${row.error ? `: ${row.error}` : ''}` }
    }
    // A caller who was never heard (its audio never reached the agent) proves nothing: failed, whatever was expected.
    if (!transcript.some((l) => l.speaker === 'customer'))
      return { status: 'failed', transcript, expectations: [], call, ...outcome, error: 'the caller was never heard: none of its lines reached the agent' }
    const expectations = scenario.expectations.map((e) => judge(e, facts))
    return { status: expectations.every((e) => e.passed) ? 'passed' : 'failed', transcript, expectations, call, ...outcome, error: null }
  }

  /**
   * A chat played and judged: each line written once the agent has answered the one before, as
   * the target agent; a website chat's transcript opens with the greeting the widget shows. `atMs`
   * is service-clock ms since the visitor's first message.
   */
  private async chatted(run: RunDoc, r: ResultDoc, scenario: ScenarioDoc, workspace: WorkspaceDoc, stopped: () => boolean): Promise<Partial<ResultDoc>> {
    const agent = await this.d.target(run.workspaceId, run.agentId, run.target)
    if (!agent) return { status: 'failed', transcript: [], expectations: [], call: null, error: `the run’s agent or its version ${run.target} is gone` }
    // Unique per result and attempt: a visitor no person is, on a thread of its own.
    const customer = { key: `sim-${run.id}-${r.index}-${r.attempts}`, phone: callerNumber(run.seed, r.index) }
    const channel = scenario.channel === 'chatapp' ? 'chatapp' : 'web'
    let conversation: string | null = null
    let error: string | null = null
    const greeting = channel === 'web' && agent.greeting.trim() ? [{ speaker: 'agent', text: agent.greeting.trim() }] : []
    // What the caller has heard and said: a persona caller's model reads it before each line.
    const heard: HeardLine[] = [...greeting]
    const persona = scenario.caller.persona !== undefined ? await this.persona(run, workspace, agent, scenario).catch((err: Error) => err) : null
    if (persona instanceof Error) return { status: 'failed', transcript: [], expectations: [], call: null, error: persona.message }
    const script = (scenario.caller.lines ?? []).map((l) => l.say!)
    for (let i = 0; !stopped(); i++) {
      let text: string | null
      try {
        text = persona ? await persona.next(heard) : (script[i] ?? null)
      } catch (err) {
        error = (err as Error).message
        break
      }
      if (text === null) break
      try {
        const answer = await this.d.chat(channel, workspace, agent, customer, text)
        conversation = answer.conversationId
        heard.push({ speaker: 'customer', text }, { speaker: 'agent', text: answer.reply })
      } catch (err) {
        error = `the agent did not answer “${text}”: ${(err as Error).message}`
        break
      }
    }
    const history = conversation ? await this.d.conversations.history(conversation, 500) : []
    const written = history.filter((m) => m.author === 'customer' || m.author === 'agent')
    const first = written[0] ? Date.parse(written[0].createdAt) : 0
    const transcript: Line[] = [
      // The widget shows the greeting before the visitor writes; a chat-app customer writes first.
      ...greeting.map((l) => ({ ...l, atMs: 0 })),
      ...written.map((m) => ({
        speaker: m.author,
        text: m.parts.map((p) => (p.type === 'text' ? p.text : '')).join(' '),
        atMs: Date.parse(m.createdAt) - first,
      })),
    ]
    if (error) return { status: 'failed', transcript, expectations: [], call: null, conversation, error }
    const tools = history.flatMap((m) => (m.tools ?? []).map((t) => t.name))
    const facts: CallFacts = {
      transcript,
      fields: await this.d.fields(workspace, agent, transcript),
      tools,
      endedBy: tools.includes('end_call') ? 'agent' : 'caller',
      hangup: null,
    }
    const expectations = scenario.expectations.map((e) => judge(e, facts))
    return { status: expectations.every((e) => e.passed) ? 'passed' : 'failed', transcript, expectations, call: null, conversation, fields: facts.fields, tools, error: null }
  }

  /**
   * A phone call's persona caller: its next line once the agent has answered (the sandbox callee
   * asks), read from the call's transcript as written so far. A model failure is kept for the
   * result (personaFailures) and hangs the caller up.
   */
  private async spoken(run: RunDoc, r: ResultDoc, workspace: WorkspaceDoc, scenario: ScenarioDoc) {
    const target = await this.d.target(run.workspaceId, run.agentId, run.target)
    if (!target) throw new PersonaError(`the run’s agent or its version ${run.target} is gone`)
    const persona = await this.persona(run, workspace, target, scenario)
    this.personaFailures.delete(r.id)
    let callId: string | null = null
    return {
      placed: (id: string) => {
        callId = id
      },
      next: async (): Promise<string | null> => {
        const row = callId ? await this.d.calls().row(callId) : null
        try {
          return await persona.next(row?.transcript ?? [])
        } catch (err) {
          this.personaFailures.set(r.id, (err as Error).message)
          return null
        }
      },
    }
  }

  /** A scenario's persona caller, on the model of the agent as the run targets it (the agent's own, BYOK first). */
  private async persona(run: RunDoc, workspace: WorkspaceDoc, agent: AgentDoc, scenario: ScenarioDoc): Promise<PersonaCaller> {
    const { persona, goal, maxTurns, opening } = scenario.caller
    const model = await this.d.callerModel(workspace, agent).catch((err: Error) => {
      throw new PersonaError(`the caller’s model could not be had: ${err.message}`)
    })
    if (model.provider === 'local') throw new PersonaError('a persona caller needs a vendor model, and the agent runs on the local model (caller.persona)')
    return new PersonaCaller(model, { persona: persona!, goal: goal!, maxTurns, opening }, run.seed)
  }

  /** A cancelled run: calls not started never start, calls in progress are ended, both show `cancelled`. */
  async cancelled(run: RunDoc): Promise<void> {
    const workspace = await this.d.workspace(run.workspaceId)
    for (const r of await this.d.store.results.find({ runId: run.id })) {
      if (r.status !== 'pending' && r.status !== 'calling') continue
      if (r.status === 'calling' && r.callId && workspace)
        await this.d
          .calls()
          .end(workspace, r.callId)
          .catch(() => {})
      await this.d.store.results.update(r.id, { status: 'cancelled', error: 'the run was cancelled' })
    }
  }
}
