/**
 * A scenario from a call (docs/api/simulations.md "A scenario from a call"): the call's caller,
 * cut from the caller's side of its recording at the caller's turns as the call record timed them
 * (`recordingTimeline`), becomes the scenario's lines — each an `audio` stretch with the words the
 * call heard in it, played in turn after the new agent's answer (the pauses inside it kept), or
 * over the agent at the same offset into its speech when the caller came in over it; keypad turns
 * become keys. Only what passed through the agent is there: the recording ends at a transfer's
 * hand-off, and so do the turns. The audio is read from the workspace's own file storage when the
 * scenario is made and again when it runs; nothing is copied.
 */

import { clashes, notThere } from '../../refusals'
import { KEYPAD_LINE } from '../../voice/public'
import type { CallerAudio, CallerRecordings, CallTryDoc } from '../calls/public'
import { AFTER_MS_MAX, type ExpectationSpec, LINES_MAX, type ScenarioInput } from './model'

type CallerLine = NonNullable<ScenarioInput['caller']['lines']>[number]

/** The recording's rate (recorder.ts): 8 samples a millisecond. */
const PER_MS = 8
/** Louder than this is the caller's voice when trimming the silence around a turn (~-40 dBFS, as the sandbox callee finds a line's end). */
const SPEECH_FLOOR = 328
/** A `say` line's longest text (model.ts CallerLine), and a `digits` line's most keys. */
const SAY_MAX = 300
const KEYS_MAX = 32
/** A call in one of these is over: its recording, if kept, is finished. */
const OVER = new Set(['completed', 'missed', 'failed', 'cancelled'])

export interface ReplayDeps {
  recordings: Pick<CallerRecordings, 'call' | 'why' | 'audio'>
  /** The tools the call's agent called, in order (its conversation's messages). */
  tools: (conversationId: string) => Promise<string[]>
}

export interface ReplayScenario {
  caller: ScenarioInput['caller']
  replayOf: { callId: string; attempt: number }
  suggestedExpectations: ExpectationSpec[]
}

export class CallReplays {
  constructor(private readonly d: ReplayDeps) {}

  /** The caller and suggested expectations of a scenario from call `callId`; 404 for a call not of the workspace, 409 naming why it cannot be replayed. */
  async scenario(workspaceId: string, callId: string): Promise<ReplayScenario> {
    const row = await this.d.recordings.call(workspaceId, callId)
    if (!row) throw notThere(`fromCall: no call ${callId} in this workspace`)
    // A transferred call's recording is finished at the hand-off, while the caller talks on with the person.
    if (row.media === 'live' || (!OVER.has(row.status) && !row.recording?.ready))
      throw clashes(`fromCall: call ${callId} is not over yet (${row.status}); its recording is finished when it ends`, { state: row.status })
    const why = this.d.recordings.why(row)
    if (why) throw clashes(`fromCall: ${why}`)
    const audio = await this.d.recordings.audio(workspaceId, row.callId, row.attempt)
    if ('gone' in audio) throw clashes(`fromCall: ${audio.gone}`)
    const lines = linesOf(row, audio.pcm)
    if (lines.length === 0) throw clashes(`fromCall: the caller of call ${callId} said nothing the agent heard; there is nothing to replay`)
    const tools = row.conversationId ? await this.d.tools(row.conversationId) : []
    return { caller: { fromCall: row.callId, lines }, replayOf: { callId: row.callId, attempt: row.attempt }, suggestedExpectations: suggested(row, tools) }
  }

  /** The recording's caller audio for a run, or why it cannot be played. */
  audio(workspaceId: string, of: { callId: string; attempt: number }): Promise<CallerAudio> {
    return this.d.recordings.audio(workspaceId, of.callId, of.attempt)
  }
}

/** The caller's turns up to a transfer's hand-off, each cut from the recording where the record timed it. */
function linesOf(row: CallTryDoc, pcm: Int16Array): CallerLine[] {
  const timeline = row.recordingTimeline!
  const handOff = row.transfer?.startedAt ? Date.parse(row.transfer.startedAt) : Number.POSITIVE_INFINITY
  const turns = row.transcript.filter((l) => l.speaker === 'customer').slice(0, timeline.turnEndsMs.length)
  const lines: CallerLine[] = []
  let from = 0
  for (const [k, turn] of turns.entries()) {
    const to = Math.min(timeline.turnEndsMs[k]!, pcm.length / PER_MS)
    const cut = { from, to }
    from = to
    if (Date.parse(turn.at) > handOff) continue
    const keys = new RegExp(`^${KEYPAD_LINE.source}$`).exec(turn.text.trim())?.[1]
    if (keys) {
      lines.push({ digits: keys.slice(0, KEYS_MAX) })
      continue
    }
    const said = turn.text.replace(KEYPAD_LINE, '').trim().slice(0, SAY_MAX)
    const voiced = trimmed(pcm, cut.from, cut.to)
    if (!said || !voiced) continue
    const over = timeline.agentMs.find(([a, b]) => a <= voiced.fromMs && voiced.fromMs < b)
    lines.push(over ? { say: said, audio: voiced, interrupt: true, afterMs: Math.min(voiced.fromMs - over[0], AFTER_MS_MAX) } : { say: said, audio: voiced })
  }
  return lines.slice(0, LINES_MAX)
}

/** The caller's voice within [fromMs, toMs): the silence around it left out, the pauses inside kept; null when it is all silence. */
function trimmed(pcm: Int16Array, fromMs: number, toMs: number): { fromMs: number; toMs: number } | null {
  let a = Math.floor(fromMs * PER_MS)
  let b = Math.min(pcm.length, Math.ceil(toMs * PER_MS))
  while (a < b && Math.abs(pcm[a]!) < SPEECH_FLOOR) a++
  while (b > a && Math.abs(pcm[b - 1]!) < SPEECH_FLOOR) b--
  if (b <= a) return null
  return { fromMs: Math.floor(a / PER_MS), toMs: Math.ceil(b / PER_MS) }
}

/** The call's own outcome as expectations: the fields it extracted, the transfer it made, who ended it. */
function suggested(row: CallTryDoc, tools: string[]): ExpectationSpec[] {
  const out: ExpectationSpec[] = []
  for (const [name, value] of Object.entries(row.fields ?? {})) {
    if (typeof value === 'string' && (value.length === 0 || value.length > SAY_MAX)) continue
    out.push({ kind: 'field', name, equals: value })
  }
  if (row.transfer?.startedAt && row.transfer.by === 'agent') out.push({ kind: 'tool', name: 'transfer_call' })
  const endedBy = tools.includes('end_call') ? 'agent' : row.hangup === 'answered' ? 'caller' : null
  if (endedBy) out.push({ kind: 'ended', by: endedBy })
  return out
}

/**
 * A replayed scenario's lines as the sandbox callee reads them, with the clips its `[clip N]` lines
 * play, cut from the caller's audio; an error naming the line whose stretch the recording does not hold.
 */
export function replayedCaller(lines: CallerLine[], pcm: Int16Array, scripted: (l: CallerLine) => string): { lines: string[]; clips: Int16Array[] } {
  const clips: Int16Array[] = []
  const script = lines.map((l, i) => {
    if (!l.audio) return scripted(l)
    const { fromMs, toMs } = l.audio
    if (toMs <= fromMs || toMs * PER_MS > pcm.length) throw new Error(`caller.lines[${i}].audio: ${fromMs}–${toMs} ms is not within the call's recording (${Math.floor(pcm.length / PER_MS)} ms)`)
    clips.push(pcm.slice(fromMs * PER_MS, toMs * PER_MS))
    const clip = `[clip ${clips.length - 1}] ${l.say!.trim()}`
    if (l.interrupt) return `> ${l.afterMs !== undefined ? `[after ${l.afterMs}] ` : ''}${clip}`
    return l.waitMs !== undefined ? `[wait ${l.waitMs}] ${clip}` : clip
  })
  return { lines: script, clips }
}
