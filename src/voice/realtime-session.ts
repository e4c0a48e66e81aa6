/**
 * A call on a speech-to-speech model (OpenAI's Realtime API, providers/realtime/openai.ts) in place
 * of the cascaded pipeline (session.ts): the caller's μ-law goes to the model as the line carried
 * it, the model's μ-law goes to the line (realtime-playout.ts), and the model's turn detection
 * (server or semantic VAD) or ours (realtime-turns.ts) decides when the caller is done. On a
 * barge-in (speech heard while the model's audio plays) the line is cleared, the response cancelled and the model's item
 * truncated to what the caller heard (`audio_end_ms`), so the model's context and the transcript
 * hold only that. The agent's tools are the model's functions; their answers go back as
 * `function_call_output` and a new response. A failure of the model fails the call with its
 * reason: there is no other engine to fall back to (docs/spec.md BYOK).
 */

import { SILENCE_TIMEOUT_MS } from '../../machines/voice-turn-setup'
import { type Cancel, type Clock, systemClock } from '../clock'
import type { PipelineState } from './call-line'
import { encodeMulaw, PHONE_RATE, resample } from './codecs'
import type { InboundFrame, OutboundFrame } from './frames'
import { keypadPrompt, keypadTones } from './keypad'
import type { TurnLatency } from './latency'
import { VOICE_LINES } from './phrases'
import type { RealtimeEvent, RealtimeLink, RealtimeUsage } from './ports/realtime'
import { usageOf } from './ports/realtime'
import { RealtimeLatency } from './realtime-latency'
import { RealtimePlayout } from './realtime-playout'
import { RealtimeTurns } from './realtime-turns'
import type { VoiceActivity } from './vad'

/** What a tool did, in the shape the conversation engine's tools answer (conversations/tool-runner.ts). */
export interface RealtimeToolOutcome {
  output: unknown
  endCall?: boolean
  transfer?: string
  digits?: string
}

/** What the session needs from the calls feature. */
export interface RealtimeLine {
  callId: string
  opening: string
  maxCallSeconds: number
  customerSaid(text: string): Promise<void>
  /** The agent's turn as the caller heard it, with the tokens its response used and the tools it ran. */
  agentSaid(text: string, usage: RealtimeUsage, tools: { name: string; input: unknown; output: unknown }[], turn?: number): Promise<void>
  /** What the caller has heard so far of agent turn `turn`, a second at a time, so a crash loses at most the last moment. */
  agentHearing?(text: string, turn: number): void
  runTool(name: string, input: Record<string, unknown>): Promise<RealtimeToolOutcome>
  /** Null once the network took the hand-off; else what to tell the caller. */
  transfer?(name: string): Promise<string | null>
  state(state: PipelineState, why?: string): void
  /** Each turn's latency, as the cascaded pipeline reports it (realtime-latency.ts). */
  latency?(turn: TurnLatency): void
  hangUp(reason: { hangup: 'answered' | 'failed'; error?: string }): Promise<void>
  log(level: 'info' | 'warn', message: string, data?: object): void
}

const addUsage = (a: RealtimeUsage, b: RealtimeUsage): RealtimeUsage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  inputAudioTokens: a.inputAudioTokens + b.inputAudioTokens,
  outputAudioTokens: a.outputAudioTokens + b.outputAudioTokens,
  cachedTokens: a.cachedTokens + b.cachedTokens,
})

/** Errors the API sends that end the session's use (the rest concern one client event and are logged). */
const FATAL = new Set(['invalid_api_key', 'rate_limit_exceeded', 'insufficient_quota', 'session_expired', 'server_error'])

/** How often the words heard so far are written: a second at a time, as the cascaded pipeline writes them (agent-turns.ts). */
const HEARING_EVERY_MS = 1_000

interface Turn {
  responseId: string
  /** The agent's turn number on the transcript (what `agentHearing` wrote is replaced by the line stored). */
  no: number
  /** Audio items of the response, with their transcripts. */
  items: Map<string, string>
  calls: { callId: string; name: string; args: string }[]
}

export class RealtimeSession {
  private readonly playout: RealtimePlayout
  private current: PipelineState = 'opening'
  private turn: Turn | null = null
  private stored: Promise<void> = Promise.resolve()
  private ending = false
  private ended = false
  private stopLimit: Cancel | null = null
  private readonly clock: Pick<Clock, 'after'>
  /** Responses made but not yet heard to their end: stored once heard (or cut), or at the close as far as heard. */
  private unheard: { turn: Turn; usage: RealtimeUsage; tools: { name: string; input: unknown; output: unknown }[] }[] = []
  /** The usage and tools of a response that said nothing, for the reply that follows it. */
  private carry: { usage: RealtimeUsage; tools: { name: string; input: unknown; output: unknown }[] } | null = null
  private turnNo = 0
  /** Each audio item's response, for the words heard so far. */
  private readonly byItem = new Map<string, Turn>()
  private hearingAt = Number.NEGATIVE_INFINITY
  /** Keys the agent's send_digits pressed, played after the response that answers the tool. */
  private keys = ''
  /** After this response has played: hang up, or put the caller through. */
  private after: { hangUp: true } | { transfer: string } | null = null

  constructor(
    private readonly parts: {
      line: RealtimeLine
      connection: RealtimeLink
      send: (f: OutboundFrame) => boolean
      record?: { fromCaller(pcm: Int16Array, rate: number): void; fromAgent(pcm: Int16Array, rate: number): void }
      /** Our turn detection in place of the model's (`service_vad`): the VAD and the silence that ends a turn. */
      turns?: { vad: VoiceActivity; waitMs: number }
      /** Caller silence after the agent's turn that ends the call; SILENCE_TIMEOUT_MS unless given. */
      silenceMs?: number
      /** Schedules the call's length limit and the caller-silence wait; the system clock unless given. */
      clock?: Pick<Clock, 'after'>
    },
  ) {
    this.clock = parts.clock ?? systemClock
    this.playout = new RealtimePlayout(parts.send, parts.record ? (pcm, rate) => parts.record!.fromAgent(pcm, rate) : undefined)
    this.latency = new RealtimeLatency(
      () => performance.now(),
      (t) => parts.line.latency?.(t),
    )
    this.turns = parts.turns
      ? new RealtimeTurns(parts.turns.vad, parts.turns.waitMs, {
          started: () => !this.ended && this.speechStarted(),
          ended: (lastSpeechMs) => {
            if (this.ended) return
            this.latency.ended(lastSpeechMs)
            this.parts.connection.commitTurn()
            this.setState('thinking', "the service's turn detection ended the caller's turn")
          },
        })
      : null
  }

  private readonly turns: RealtimeTurns | null
  private readonly latency: RealtimeLatency
  /** The caller's silence since the agent's turn ended: the call ends politely when it runs out. */
  private stopSilence: Cancel | null = null

  get state(): PipelineState {
    return this.current
  }

  /** Nothing is dropped: the caller's audio goes straight to the model. */
  readonly dropped = 0
  /** A simulated call's stream clock does not drive this engine. */
  readonly pace = null

  start(_sampleRate: number): void {
    const { connection, line } = this.parts
    connection.on((e) => this.event(e))
    connection.onClose((reason) => {
      if (reason) this.fail(reason)
    })
    this.stopLimit = this.clock.after(line.maxCallSeconds * 1000, () => this.endWith(VOICE_LINES.timeLimit))
    this.say(line.opening)
  }

  /** The model says `text` as its next turn (the opening, a refused transfer, news from outside). */
  private say(text: string): void {
    if (text) this.parts.connection.respond(`Say exactly this, and nothing else: ${JSON.stringify(text)}`)
  }

  announce(text: string): void {
    if (!this.ended) this.say(text)
  }

  /** A voicemail drop needs the cascaded pipeline: a speech-to-speech call speaks to whoever answered. */
  answeredBy(_by: 'human' | 'machine' | 'fax' | 'unknown'): void {}

  /** A transfer about to take the line: the model's audio already sent plays out first. */
  handingOff(): Promise<void> {
    return this.playout.played()
  }

  handOffFailed(): void {}

  frame(frame: InboundFrame): void {
    if (this.ended) return
    if (frame.kind === 'audio') {
      this.parts.record?.fromCaller(frame.pcm, frame.sampleRate)
      // The phone's μ-law at 8 kHz goes as it came (decoding and encoding G.711 is exact); a browser's L16 is brought to it.
      const pcm = frame.sampleRate === PHONE_RATE ? frame.pcm : resample(frame.pcm, frame.sampleRate, PHONE_RATE)
      this.parts.connection.append(encodeMulaw(pcm))
      this.latency.sent((pcm.length * 1000) / PHONE_RATE)
      this.turns?.push(pcm, PHONE_RATE)
    } else if (frame.kind === 'mark') {
      const item = this.playout.echoed(frame.name)
      this.latency.echoed()
      if (item) this.hearing(item)
    } else if (frame.kind === 'dtmf') {
      // Keys are words to the model: it hears them as the conversation engine's prompt says them.
      this.parts.connection.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: keypadPrompt(frame.digit) }] } })
      this.parts.connection.respond()
    }
  }

  drained(): void {}

  endWith(goodbye: string): void {
    if (this.ended || this.ending) return
    this.ending = true
    this.after = { hangUp: true }
    this.say(goodbye)
  }

  async close(): Promise<void> {
    this.stopLimit?.()
    this.quiet(false)
    if (!this.ended) {
      this.ended = true
      // The turns in progress are stored as far as they were heard.
      this.latency.flush()
      for (const u of this.unheard.splice(0)) this.store(u.turn, u.usage, u.tools, true)
      if (this.turn) this.store(this.turn, usageOf(null), [], true)
      if (this.carry) this.store({ responseId: '', no: 0, items: new Map(), calls: [] }, usageOf(null), [], true)
      this.turn = null
      this.setState('ended', 'the call ended')
    }
    this.parts.connection.close()
    await this.stored
  }

  /** The caller's silence starts counting (the agent's turn is over), or stops (anything else happens). */
  private quiet(counting: boolean): void {
    this.stopSilence?.()
    this.stopSilence = null
    if (!counting || this.ended) return
    this.stopSilence = this.clock.after(this.parts.silenceMs ?? SILENCE_TIMEOUT_MS, () => this.endWith(VOICE_LINES.silence))
  }

  private setState(state: PipelineState, why: string): void {
    this.quiet(state === 'listening')
    if (state === this.current) return
    this.current = state
    this.parts.line.state(state, why)
  }

  private event(e: RealtimeEvent): void {
    if (this.ended) return
    switch (e.type) {
      case 'input_audio_buffer.speech_started':
        return void this.speechStarted()
      case 'input_audio_buffer.speech_stopped':
        this.latency.ended(e.audio_end_ms)
        return void this.setState('thinking', "the model's turn detection ended the caller's turn")
      case 'conversation.item.input_audio_transcription.completed':
        if (e.transcript.trim()) this.chain(() => this.parts.line.customerSaid(e.transcript.trim()))
        return
      case 'response.created':
        this.turn = { responseId: e.response.id, no: ++this.turnNo, items: new Map(), calls: [] }
        return
      case 'response.output_audio.delta':
        this.setState('speaking', 'the model is speaking')
        if (this.turn) this.byItem.set(e.item_id, this.turn)
        this.turn?.items.set(e.item_id, this.turn.items.get(e.item_id) ?? '')
        this.latency.audio()
        return void this.playout.audio(e.item_id, Buffer.from(e.delta, 'base64'))
      case 'response.output_audio_transcript.delta':
        if (this.turn) this.turn.items.set(e.item_id, (this.turn.items.get(e.item_id) ?? '') + e.delta)
        return
      case 'response.output_audio_transcript.done':
        if (this.turn) this.turn.items.set(e.item_id, e.transcript)
        return
      case 'response.function_call_arguments.done':
        this.turn?.calls.push({ callId: e.call_id, name: e.name, args: e.arguments })
        return
      case 'response.done':
        return void this.responseDone(e.response)
      case 'error':
        if (FATAL.has(e.error.code ?? '')) return void this.fail(new Error(`OpenAI Realtime: ${e.error.message} (${e.error.code})`))
        return void this.parts.line.log('warn', 'the realtime model refused an event', { code: e.error.code, message: e.error.message })
    }
  }

  /** The caller spoke: over the agent's audio, that is a barge-in. */
  private speechStarted(): void {
    // The line may have caught up with a response still being made: its last item is cut all the same.
    const making = this.turn ? [...this.turn.items.keys()].at(-1) : undefined
    const cut = this.playout.clear() ?? (making ? this.playout.cut(making) : null)
    if (!cut) return void this.setState('callerSpeaking', 'the model heard the caller speak')
    // The server's VAD cancels its response itself (`interrupt_response`); cancelling again is harmless and covers a response it had finished making.
    if (this.turn) this.parts.connection.cancel()
    this.parts.connection.truncate(cut.id, cut.heardMs)
    this.parts.line.log('info', 'barge-in: the agent was cut where the caller stopped hearing it', { item: cut.id, audioEndMs: Math.round(cut.heardMs) })
    this.setState('interrupted', 'the caller spoke over the agent: its audio was cleared and its item truncated to what was heard')
  }

  private async responseDone(r: { id: string; status: string; status_details?: { error?: { message?: string; code?: string } | null } | null; usage?: Parameters<typeof usageOf>[0] }): Promise<void> {
    const turn = this.turn?.responseId === r.id ? this.turn : null
    this.turn = null
    if (r.status === 'failed') {
      const why = r.status_details?.error?.message ?? 'the response failed'
      return this.fail(new Error(`OpenAI Realtime: ${why}`))
    }
    for (const id of turn?.items.keys() ?? []) this.playout.done(id)
    const usage = usageOf(r.usage)
    const ran: { name: string; input: unknown; output: unknown }[] = []
    if (turn && r.status === 'completed' && turn.calls.length) {
      for (const call of turn.calls) {
        let input: Record<string, unknown> = {}
        try {
          input = JSON.parse(call.args || '{}')
        } catch {}
        const outcome = await this.parts.line.runTool(call.name, input).catch((err: Error) => ({ output: { error: err.message } }) as RealtimeToolOutcome)
        ran.push({ name: call.name, input, output: outcome.output })
        if (outcome.endCall) this.after = { hangUp: true }
        if (outcome.transfer) this.after = { transfer: outcome.transfer }
        if (outcome.digits) this.keys += outcome.digits
        this.parts.connection.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: call.callId, output: JSON.stringify(outcome.output) } })
      }
      // The model answers with the tools' outputs: its words, then (end_call, a transfer) what they asked for.
      if (turn) this.storeWhenHeard(turn, usage, ran)
      return this.parts.connection.respond()
    }
    if (turn) this.storeWhenHeard(turn, usage, ran)
    await this.playout.played()
    if (this.ended) return
    // Keys the agent pressed go to the line after the words that answer them, as a phone menu hears tones.
    if (this.keys) this.pressKeys()
    const after = this.after
    if (!after) return this.setState('listening', 'the agent finished its turn')
    this.after = null
    if ('hangUp' in after) return void this.hangUp({ hangup: 'answered' })
    const refused = await this.parts.line.transfer?.(after.transfer).catch((err: Error) => `I'm sorry, I couldn't put you through just now (${err.message}).`)
    if (refused) this.say(refused)
  }

  /** The agent's keys, as tones on the line after what it said. */
  private pressKeys(): void {
    const digits = this.keys
    this.keys = ''
    this.parts.send({ kind: 'audio', pcm: keypadTones(digits), sampleRate: PHONE_RATE })
  }

  /** Once the line has played the response (or a barge-in cut it), its words are stored as heard. */
  private storeWhenHeard(turn: Turn, usage: RealtimeUsage, tools: { name: string; input: unknown; output: unknown }[]): void {
    const entry = { turn, usage, tools }
    this.unheard.push(entry)
    void this.playout.played().then(() => {
      const i = this.unheard.indexOf(entry)
      if (i < 0) return
      this.unheard.splice(i, 1)
      this.store(turn, usage, tools)
    })
  }

  /** The response's words as the caller heard them: an item cut by a barge-in (or the call's end) up to its last heard word. */
  private store(turn: Turn, usage: RealtimeUsage, tools: { name: string; input: unknown; output: unknown }[] = [], closing = false): void {
    for (const id of turn.items.keys()) this.byItem.delete(id)
    const text = this.playout.heardText(turn.items, closing)
    // A response that only called tools is one reply with the words that answer them, as the conversation engine keeps it.
    const carried = this.carry
    this.carry = null
    const all = carried ? { usage: addUsage(carried.usage, usage), tools: [...carried.tools, ...tools] } : { usage, tools }
    if (!text && !closing) {
      this.carry = all
      return
    }
    if (!text && !all.tools.length && !all.usage.inputTokens && !all.usage.outputTokens) return
    this.chain(() => this.parts.line.agentSaid(text, all.usage, all.tools, turn.no || undefined))
  }

  /** The caller heard more of item `itemId`: its response's words so far go to the transcript, a second at a time. */
  private hearing(itemId: string): void {
    const turn = this.byItem.get(itemId)
    const now = performance.now()
    if (!turn || !this.parts.line.agentHearing || now - this.hearingAt < HEARING_EVERY_MS) return
    this.hearingAt = now
    const text = this.playout.hearingText(turn.items)
    if (text) this.chain(async () => this.parts.line.agentHearing?.(text, turn.no))
  }

  /** Writes to the call record in the order things happened. */
  private chain(write: () => Promise<void>): void {
    this.stored = this.stored.then(write).catch((err) => this.parts.line.log('warn', 'could not write the realtime turn', { err: String(err) }))
  }

  private fail(err: Error): void {
    if (this.ended) return
    this.parts.line.log('warn', 'the realtime model failed', { reason: err.message })
    void this.hangUp({ hangup: 'failed', error: err.message })
  }

  private async hangUp(reason: { hangup: 'answered' | 'failed'; error?: string }): Promise<void> {
    if (this.ended) return
    await this.close()
    await this.parts.line.hangUp(reason)
  }
}
