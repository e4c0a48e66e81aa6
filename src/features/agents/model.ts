/** Agent (v1) schemas: docs/spec.md Agent table and the voice / widget / collectFields objects. */
import { t } from 'elysia'
import { BodyInt } from '../../http/body-types'
import { pageQuery } from '../../http/pagination'
import { FLUX_LIMITS } from '../../providers/stt/deepgram-flux'
import { PATIENCE_LEVELS, SPEED_MAX, SPEED_MIN } from '../../voice/public'

/** Step text lengths are "not shown" in docs/spec.md: a title fits a heading, a detail a paragraph. */
export const STEP_TITLE_MAX = 100
export const STEP_DETAIL_MAX = 1000
/** collectFields: docs/spec.md shows `number` and `text`; we also accept these common kinds. */
export const FIELD_TYPES = ['text', 'number', 'boolean', 'date'] as const

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])

const Step = t.Object({ title: t.String({ minLength: 1, maxLength: STEP_TITLE_MAX }), detail: t.String({ maxLength: STEP_DETAIL_MAX }) }, { additionalProperties: false })

const CollectField = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 64 }),
    type: t.Optional(t.Union(FIELD_TYPES.map((v) => t.Literal(v)))),
    description: t.Optional(Nullable(t.String({ maxLength: 500 }))),
    choices: t.Optional(Nullable(t.Array(t.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 }))),
  },
  { additionalProperties: false },
)

/** Call transfer destinations (docs/api/agents.md "Transfers"): a handful per agent; the model reads each one's `whenToUse`. */
export const TRANSFERS_MAX = 10
export const TRANSFER_NAME_MAX = 60
export const TRANSFER_WHEN_MAX = 500
export const TRANSFER_MODES = ['cold', 'warm'] as const
export type TransferMode = (typeof TRANSFER_MODES)[number]

const TransferInput = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: TRANSFER_NAME_MAX, description: 'who the caller is connected to, as the agent says it ("Billing team")' }),
    phoneNumber: t.String({ minLength: 1, maxLength: 40, description: 'with its country code; answered in E.164' }),
    whenToUse: t.String({ minLength: 1, maxLength: TRANSFER_WHEN_MAX, description: 'when the agent should hand the caller to this number: the model reads it' }),
    mode: t.Optional(
      t.Union(
        TRANSFER_MODES.map((m) => t.Literal(m)),
        {
          description:
            '`cold` (default): the caller is put through and the agent leaves; `warm`: the agent calls the person first and tells them who is waiting and why, then joins the two (or, not taken, says so to the caller and carries on)',
        },
      ),
    ),
  },
  { additionalProperties: false },
)

const Escalation = t.Object({ onNoAnswer: t.Optional(t.Boolean()), onRequest: t.Optional(t.Boolean()) }, { additionalProperties: false })

const WidgetInput = t.Object(
  {
    theme: t.Optional(t.Union([t.Literal('classic'), t.Literal('modern')])),
    accent: t.Optional(Nullable(t.String({ pattern: '^#[0-9a-fA-F]{6}$', description: 'a colour as #rrggbb' }))),
    height: t.Optional(BodyInt({ minimum: 420, maximum: 900 })),
    welcomeScreen: t.Optional(t.Boolean()),
    welcomeCollectLeads: t.Optional(t.Boolean()),
    enabled: t.Optional(t.Boolean({ description: 'website chat on (default true); test chat needs it on' })),
  },
  { additionalProperties: false },
)

/** Voice dials' bounds (docs/api/voice.md "Dials"). */
export const PATIENCE_WAIT_MIN_MS = 200
export const PATIENCE_WAIT_MAX_MS = 3000
export const INTERRUPTION_MIN_SPEECH_MS = 64
export const INTERRUPTION_MAX_SPEECH_MS = 2000
export const INTERRUPTION_MAX_WORDS = 10
export const BACKCHANNELS_MAX = 50
export const BACKCHANNEL_MAX_CHARS = 40

const PatienceInput = t.Object(
  {
    level: t.Optional(
      t.Union(
        PATIENCE_LEVELS.map((l) => t.Literal(l)),
        { description: 'how long the agent waits for a caller who paused: quick, normal (default), patient' },
      ),
    ),
    waitMs: t.Optional(
      Nullable(
        BodyInt({
          minimum: PATIENCE_WAIT_MIN_MS,
          maximum: PATIENCE_WAIT_MAX_MS,
          description: 'no pause shorter than this (ms) ends a turn; replaces the level; null: the level decides',
        }),
      ),
    ),
  },
  { additionalProperties: false },
)

const InterruptionsInput = t.Object(
  {
    enabled: t.Optional(t.Boolean({ description: 'false: the agent talks through speech over it (default true)' })),
    minSpeechMs: t.Optional(
      Nullable(BodyInt({ minimum: INTERRUPTION_MIN_SPEECH_MS, maximum: INTERRUPTION_MAX_SPEECH_MS, description: 'the caller’s speech over the agent that stops it (ms); null: 64' })),
    ),
    minWords: t.Optional(
      Nullable(BodyInt({ minimum: 1, maximum: INTERRUPTION_MAX_WORDS, description: 'fewer words said over the agent and it resumes its sentence instead of answering; null: any words' })),
    ),
    backchannels: t.Optional(
      t.Array(t.String({ minLength: 1, maxLength: BACKCHANNEL_MAX_CHARS }), {
        maxItems: BACKCHANNELS_MAX,
        description: 'more words or phrases that, said over the agent, are acknowledgements: it resumes its sentence',
      }),
    ),
  },
  { additionalProperties: false },
)

/**
 * AssemblyAI's turn settings' bounds: a confidence is a probability (0–1, AssemblyAI's
 * `end_of_turn_confidence_threshold`); AssemblyAI publishes no ceiling for its silences, and 10 s
 * is past any pause inside a turn (issue 46's corpus: 1 s at most) and inside the call's 30 s
 * silence limit.
 */
export const ASSEMBLYAI_SILENCE_MAX_MS = 10_000

const AssemblyAiInput = t.Object(
  {
    endOfTurnConfidence: t.Optional(Nullable(t.Number({ minimum: 0, maximum: 1, description: 'how sure its model must be that the turn ended, 0–1; null: AssemblyAI’s default' }))),
    minTurnSilenceMs: t.Optional(Nullable(BodyInt({ minimum: 0, maximum: ASSEMBLYAI_SILENCE_MAX_MS, description: 'silence (ms) before a confident end of turn; null: AssemblyAI’s default' }))),
    maxTurnSilenceMs: t.Optional(Nullable(BodyInt({ minimum: 0, maximum: ASSEMBLYAI_SILENCE_MAX_MS, description: 'silence (ms) that ends a turn however unsure; null: AssemblyAI’s default' }))),
    formatTurns: t.Optional(Nullable(t.Boolean({ description: 'an ended turn’s text punctuated and cased; null: true' }))),
  },
  { additionalProperties: false },
)

/** Deepgram Flux's end-of-turn settings, in its documented ranges (src/providers/stt/deepgram-flux.ts FLUX_LIMITS). */
const { eotThreshold: EOT, eagerEotThreshold: EAGER, eotTimeoutMs: EOT_TIMEOUT } = FLUX_LIMITS
const FluxInput = t.Object(
  {
    eotThreshold: t.Optional(Nullable(t.Number({ minimum: EOT.min, maximum: EOT.max, description: 'confidence that ends the turn; null: 0.7' }))),
    eagerEotThreshold: t.Optional(Nullable(t.Number({ minimum: EAGER.min, maximum: EAGER.max, description: 'confidence that starts the answer early, held; null: no eager ends' }))),
    eotTimeoutMs: t.Optional(Nullable(BodyInt({ minimum: EOT_TIMEOUT.min, maximum: EOT_TIMEOUT.max, description: 'silence that ends the turn whatever the confidence (ms); null: 5000' }))),
  },
  { additionalProperties: false },
)
const FluxView = t.Object({ eotThreshold: Nullable(t.Number()), eagerEotThreshold: Nullable(t.Number()), eotTimeoutMs: Nullable(t.Integer()) })

const VoiceInput = t.Object(
  {
    answersCalls: t.Optional(t.Boolean()),
    voice: t.Optional(t.String({ description: 'an id from GET /voices' })),
    language: t.Optional(Nullable(t.String())),
    summariseCalls: t.Optional(t.Boolean()),
    detectMachines: t.Optional(t.Boolean()),
    voicemailMessage: t.Optional(
      Nullable(t.String({ description: 'left after the beep when a machine answers (needs detectMachines); {{name}}, {{firstName}}, {{phone}}, {{email}}; null: hang up' })),
    ),
    recordCalls: t.Optional(t.Boolean()),
    maxCallSeconds: t.Optional(Nullable(BodyInt({ minimum: 60, maximum: 1200 }))),
    endpointingMs: t.Optional(
      Nullable(
        BodyInt({
          minimum: 200,
          maximum: 3000,
          description: 'the longest silence (ms) the agent waits when the caller trails off, capping the shorter waits for complete turns; null: 1500 (docs/api/voice.md)',
        }),
      ),
    ),
    speed: t.Optional(Nullable(t.Number({ minimum: SPEED_MIN, maximum: SPEED_MAX, description: 'speaking rate against the engine’s own (1); null: the engine’s own' }))),
    patience: t.Optional(PatienceInput),
    interruptions: t.Optional(InterruptionsInput),
    assemblyai: t.Optional(Nullable(AssemblyAiInput)),
    /** End-of-turn settings when the call hears the caller through Deepgram Flux (docs/api/voice.md). */
    flux: t.Optional(FluxInput),
    // Read-only; accepted and ignored so a GET body can be sent back unchanged.
    surfaces: t.Optional(t.Array(t.String())),
    phoneNumber: t.Optional(Nullable(t.String())),
  },
  { additionalProperties: false },
)

const agentInputFields = {
  instructions: t.Optional(t.String({ maxLength: 8000 })),
  greeting: t.Optional(t.String({ maxLength: 200 })),
  businessDescription: t.Optional(t.String({ maxLength: 200 })),
  model: t.Optional(t.String({ description: 'an id from GET /models' })),
  temperature: t.Optional(t.Number({ description: '0–2; values outside are clamped' })),
  maxReplyTokens: t.Optional(t.Number({ description: '100–800; values outside are clamped' })),
  language: t.Optional(t.String({ description: '`auto` or a language name such as English, Hindi, Tamil' })),
  secondLanguage: t.Optional(Nullable(t.String())),
  escalation: t.Optional(Escalation),
  captureLeads: t.Optional(t.Boolean()),
  scheduleCallbacks: t.Optional(t.Boolean()),
  transfers: t.Optional(t.Array(TransferInput, { maxItems: TRANSFERS_MAX, description: 'where a live call can be transferred (the transfer_call tool, POST /calls/{id}/transfer)' })),
  steps: t.Optional(t.Array(Step, { maxItems: 12 })),
  widget: t.Optional(WidgetInput),
  voice: t.Optional(VoiceInput),
  collectFields: t.Optional(t.Array(CollectField, { maxItems: 30 })),
  // Read-only; accepted and ignored so a GET body can be sent back unchanged.
  id: t.Optional(t.String()),
  webKey: t.Optional(t.String()),
  createdAt: t.Optional(t.String()),
}

export const CreateAgent = t.Object({ name: t.String({ minLength: 2, maxLength: 60 }), ...agentInputFields }, { additionalProperties: false })
export type CreateAgent = typeof CreateAgent.static
export const PatchAgent = t.Object({ name: t.Optional(t.String({ minLength: 2, maxLength: 60 })), ...agentInputFields }, { additionalProperties: false })
export type PatchAgent = typeof PatchAgent.static

export const Agent = t.Object({
  id: t.String(),
  name: t.String(),
  instructions: t.String(),
  greeting: t.String(),
  businessDescription: t.String(),
  model: t.String(),
  temperature: t.Number(),
  maxReplyTokens: t.Integer(),
  language: t.String(),
  secondLanguage: Nullable(t.String()),
  escalation: t.Object({ onNoAnswer: t.Boolean(), onRequest: t.Boolean() }),
  captureLeads: t.Boolean(),
  scheduleCallbacks: t.Boolean(),
  transfers: t.Array(t.Object({ name: t.String(), phoneNumber: t.String(), whenToUse: t.String(), mode: t.Union(TRANSFER_MODES.map((m) => t.Literal(m))) })),
  steps: t.Array(t.Object({ title: t.String(), detail: t.String() })),
  widget: t.Object({
    theme: t.String(),
    accent: Nullable(t.String()),
    height: t.Integer(),
    welcomeScreen: t.Boolean(),
    welcomeCollectLeads: t.Boolean(),
    enabled: t.Boolean(),
  }),
  voice: t.Object({
    answersCalls: t.Boolean(),
    voice: t.String(),
    language: Nullable(t.String()),
    summariseCalls: t.Boolean(),
    detectMachines: t.Boolean(),
    voicemailMessage: Nullable(t.String()),
    recordCalls: t.Boolean(),
    maxCallSeconds: Nullable(t.Integer()),
    endpointingMs: Nullable(t.Integer()),
    speed: Nullable(t.Number()),
    patience: t.Object({ level: t.Union(PATIENCE_LEVELS.map((l) => t.Literal(l))), waitMs: Nullable(t.Integer()) }),
    interruptions: t.Object({ enabled: t.Boolean(), minSpeechMs: Nullable(t.Integer()), minWords: Nullable(t.Integer()), backchannels: t.Array(t.String()) }),
    /** AssemblyAI's turn settings, used when the call's speech-to-text is AssemblyAI; null: its defaults. */
    assemblyai: Nullable(t.Object({ endOfTurnConfidence: Nullable(t.Number()), minTurnSilenceMs: Nullable(t.Integer()), maxTurnSilenceMs: Nullable(t.Integer()), formatTurns: Nullable(t.Boolean()) })),
    flux: FluxView,
    surfaces: t.Array(t.Union([t.Literal('web'), t.Literal('phone')])),
    phoneNumber: Nullable(t.String()),
  }),
  collectFields: t.Array(t.Object({ name: t.String(), type: t.String(), description: Nullable(t.String()), choices: Nullable(t.Array(t.String())) })),
  webKey: t.String(),
  createdAt: t.String(),
})
export type Agent = typeof Agent.static

export const ListAgentsQuery = t.Object(pageQuery(100, 25))
