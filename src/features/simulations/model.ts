/** Simulation schemas (docs/api/simulations.md): scenarios, suites, runs and their results. */
import { t } from 'elysia'
import { BodyInt } from '../../http/body-types'

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])
const Scalar = t.Union([t.String({ maxLength: 300 }), t.Number(), t.Boolean()])

/** Scenarios a suite holds, and the calls a run may make of each: 50 at once is what bench:simulations measured on 2 cores. */
export const SUITE_SCENARIOS_MAX = 50
export const RUN_COUNT_MAX = 10
export const LINES_MAX = 30
export const EXPECTATIONS_MAX = 30

/** The longest pause a caller waits out before a line: a minute of silence is past any agent's patience (its silence prompts come well before). */
export const WAIT_MS_MAX = 60_000
/** How far into the agent's speech a line over it may start: longer than any single answer of the agent runs. */
export const AFTER_MS_MAX = 20_000

export const CallerLine = t.Object(
  {
    say: t.Optional(t.String({ minLength: 1, maxLength: 300, description: 'what the caller says, once the agent has spoken and paused' })),
    digits: t.Optional(t.String({ maxLength: 100, description: 'keys the caller presses instead of speaking (1–32 of 0-9 * # A-D), in-band tones, in turn' })),
    waitMs: t.Optional(BodyInt({ minimum: 0, maximum: WAIT_MS_MAX, description: 'a said or keyed line: how long the agent must have been silent before it (real time; default 900)' })),
    interrupt: t.Optional(t.Boolean({ description: 'say it over the agent, `afterMs` into its speech (a barge-in)' })),
    noise: t.Optional(t.Boolean({ description: 'a burst of voice-like noise with no words over the agent (a false interruption); no `say`' })),
    afterMs: t.Optional(BodyInt({ minimum: 0, maximum: AFTER_MS_MAX, description: 'an interrupt or noise line: how far into the agent’s speech it starts (real time; default 600)' })),
    audio: t.Optional(
      t.Object(
        { fromMs: BodyInt({ minimum: 0 }), toMs: BodyInt({ minimum: 1 }) },
        { additionalProperties: false, description: 'a replayed call’s line: the stretch of the call’s recorded caller audio it plays (ms), `say` being what was heard in it' },
      ),
    ),
  },
  { additionalProperties: false },
)

/** A persona caller's turns when `maxTurns` is not given, and the most it may take: as many as a script's lines. */
export const PERSONA_TURNS_DEFAULT = 10
export const PERSONA_TURNS_MAX = LINES_MAX

export const Caller = t.Object(
  {
    fromCall: t.Optional(t.String({ description: 'out_…: the call this caller replays (set by POST with fromCall; its `audio` lines play that call’s recording)' })),
    lines: t.Optional(t.Array(CallerLine, { minItems: 1, maxItems: LINES_MAX, description: 'a scripted caller: its lines, in order' })),
    persona: t.Optional(
      t.String({ minLength: 1, maxLength: 2_000, description: 'a caller played by a vendor model: who they are and how they talk (instead of `lines`; needs a vendor model, not `local`)' }),
    ),
    goal: t.Optional(t.String({ minLength: 1, maxLength: 1_000, description: 'a persona caller: what they called to get done; the model hangs up once it is' })),
    maxTurns: t.Optional(BodyInt({ minimum: 1, maximum: PERSONA_TURNS_MAX, description: `a persona caller: the most lines it says before hanging up (default ${PERSONA_TURNS_DEFAULT})` })),
    opening: t.Optional(t.String({ minLength: 1, maxLength: 300, description: 'a persona caller: its first line, word for word (default: the model writes it)' })),
  },
  { additionalProperties: false, description: 'exactly one of `lines` (scripted) or `persona` with `goal` (a model plays the caller)' },
)

export const EXPECTATION_KINDS = ['field', 'says', 'neverSays', 'tool', 'ended', 'maxTurns', 'slowestTurn'] as const
export type ExpectationKind = (typeof EXPECTATION_KINDS)[number]

export const Expectation = t.Object(
  {
    kind: t.Union(
      EXPECTATION_KINDS.map((k) => t.Literal(k)),
      { description: 'what is checked; the other members it needs are named in docs/api/simulations.md' },
    ),
    name: t.Optional(t.String({ minLength: 1, maxLength: 60, description: 'field: the field’s name; tool: the tool’s name' })),
    equals: t.Optional(Scalar),
    oneOf: t.Optional(t.Array(Scalar, { minItems: 1, maxItems: 20 })),
    text: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'says / neverSays: words, matched case-insensitively' })),
    by: t.Optional(t.Union([t.Literal('agent'), t.Literal('caller')], { description: 'ended: who ended the call' })),
    turns: t.Optional(BodyInt({ minimum: 1, maximum: 100, description: 'maxTurns: the most agent turns' })),
    ms: t.Optional(BodyInt({ minimum: 0, maximum: 600_000, description: 'slowestTurn: the slowest agent answer allowed, service-clock ms' })),
  },
  { additionalProperties: false },
)
export type ExpectationSpec = typeof Expectation.static

export const ScenarioBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 120 }),
    channel: t.Optional(
      t.Union([t.Literal('phone'), t.Literal('web'), t.Literal('chatapp')], {
        description: 'phone (default): a call over the sandbox network’s audio path; web: a website-chat visitor; chatapp: a chat-app customer — each writing its lines',
      }),
    ),
    caller: Caller,
    variables: t.Optional(t.Record(t.String({ maxLength: 60 }), Scalar, { description: 'the contact’s variables, on the call as POST /calls `variables`' })),
    expectations: t.Optional(t.Array(Expectation, { maxItems: EXPECTATIONS_MAX })),
  },
  { additionalProperties: false },
)
export type ScenarioInput = typeof ScenarioBody.static

/** POST: a scenario as written, or one made from a call (`fromCall`, with at most a name, variables and expectations). */
export const ScenarioCreateBody = t.Object(
  {
    ...ScenarioBody.properties,
    name: t.Optional(ScenarioBody.properties.name),
    caller: t.Optional(Caller),
    fromCall: t.Optional(t.String({ minLength: 1, maxLength: 100, description: 'a call of this workspace whose recording was kept: its caller is replayed (docs/api/simulations.md)' })),
  },
  { additionalProperties: false },
)
export type ScenarioCreateInput = typeof ScenarioCreateBody.static

export const Scenario = t.Object({
  id: t.String({ description: 'scn_…' }),
  name: t.String(),
  channel: t.Union([t.Literal('phone'), t.Literal('web'), t.Literal('chatapp')]),
  caller: t.Object({
    fromCall: t.Optional(t.String()),
    lines: t.Optional(t.Array(CallerLine)),
    persona: t.Optional(t.String()),
    goal: t.Optional(t.String()),
    maxTurns: t.Optional(t.Integer()),
    opening: t.Optional(t.String()),
  }),
  variables: t.Record(t.String(), Scalar),
  expectations: t.Array(Expectation),
  suggestedExpectations: t.Optional(t.Array(Expectation, { description: 'a scenario from a call: the call’s own outcome (fields, transfer, who ended it), to take into `expectations` by PUT' })),
  createdAt: t.String(),
  updatedAt: t.String(),
})

export const SuiteBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 120 }),
    agent: t.String({ description: 'ag_… of this workspace' }),
    scenarios: t.Array(t.String(), { minItems: 1, maxItems: SUITE_SCENARIOS_MAX, description: 'scn_… ids, in the order they run' }),
    requiredToPublish: t.Optional(t.Boolean({ description: 'the agent’s publish gate: publishing refuses (409) unless the draft’s latest run of this suite passed' })),
  },
  { additionalProperties: false },
)
export type SuiteInput = typeof SuiteBody.static

export const Suite = t.Object({
  id: t.String({ description: 'sui_…' }),
  name: t.String(),
  agent: t.String(),
  scenarios: t.Array(t.String()),
  requiredToPublish: t.Boolean(),
  createdAt: t.String(),
  updatedAt: t.String(),
})

export const RunBody = t.Object(
  {
    target: t.Union([t.Literal('draft'), BodyInt({ minimum: 1 })], { description: '`draft`, or a version number of the suite’s agent' }),
    count: t.Optional(BodyInt({ minimum: 1, maximum: RUN_COUNT_MAX, default: 1, description: 'calls per scenario' })),
    seed: t.Optional(BodyInt({ minimum: 0, maximum: 2 ** 31 - 1, description: 'picks the callers’ numbers; default 1' })),
    webhooks: t.Optional(t.Boolean({ description: 'send call.completed / call.analysed for the run’s calls (default false); simulation.finished is always sent' })),
  },
  { additionalProperties: false },
)

const Line = t.Object({ speaker: t.String(), text: t.String(), atMs: t.Integer({ description: 'service-clock ms since the call’s first line' }) })

export const ExpectationResult = t.Composite(
  [
    t.Omit(Expectation, ['kind']),
    t.Object({
      kind: t.String(),
      passed: t.Boolean(),
      evidence: t.Object(
        {
          field: t.Optional(t.String()),
          value: t.Optional(t.Unknown()),
          lines: t.Optional(t.Array(t.Object({ speaker: t.String(), text: t.String(), atMs: t.Integer() }))),
          tools: t.Optional(t.Array(t.String())),
          endedBy: t.Optional(Nullable(t.String())),
          hangup: t.Optional(Nullable(t.String())),
          turns: t.Optional(t.Integer()),
          slowest: t.Optional(t.Unknown({ description: '{ ms, caller, agent }: the slowest answer and the two lines; null with no answer to time' })),
        },
        { description: 'what decided it: transcript lines, field values, tools called, the slow turn' },
      ),
    }),
  ],
  { description: 'the expectation as written, with passed and evidence' },
)

export const RunResult = t.Object({
  scenario: t.String(),
  name: t.String(),
  instance: t.Integer({ description: '1…count' }),
  status: t.Union([t.Literal('pending'), t.Literal('calling'), t.Literal('passed'), t.Literal('failed'), t.Literal('cancelled')]),
  transcript: t.Array(Line),
  expectations: t.Array(ExpectationResult),
  error: Nullable(t.String()),
  conversation: Nullable(t.String({ description: 'conv_… of the call or chat (a test conversation, marked simulated)' })),
  call: Nullable(
    t.Object({
      id: t.String(),
      recording: Nullable(t.String()),
      hangup: Nullable(t.String()),
      latency: t.Unknown({ description: 'per-stage p50/p95/max of the call’s turns (GET /calls/{id} latency)' }),
      turns: t.Optional(
        t.Array(
          t.Object({
            caller: Nullable(t.String({ description: 'the caller’s words of the turn' })),
            waitedMs: t.Integer({ description: 'the silence the agent waited before taking the turn (the same on every run on the manual clock)' }),
            answerMs: Nullable(t.Integer({ description: 'ms from the end of the caller’s speech to the agent’s first audio; on the manual clock, of the caller’s audio' })),
          }),
          { description: 'each caller turn the call timed, in order' },
        ),
      ),
    }),
  ),
  fields: t.Record(t.String(), t.Unknown(), { description: 'the fields the analysis read from the call or chat (the agent’s collectFields)' }),
  tools: t.Array(t.String(), { description: 'the tools the agent called, in order' }),
})

export const RUN_STATUSES = ['queued', 'running', 'done', 'cancelled'] as const

/** A run without its results: what lists and the `simulation.finished` event carry. */
export const RunOutline = t.Object({
  id: t.String({ description: 'srun_…' }),
  suite: t.String(),
  agent: t.String(),
  target: t.Union([t.Literal('draft'), t.Integer()]),
  count: t.Integer(),
  seed: t.Integer(),
  webhooks: t.Boolean(),
  status: t.Union(RUN_STATUSES.map((s) => t.Literal(s))),
  passed: Nullable(t.Boolean({ description: 'done: every expectation of every call held; null before' })),
  totals: t.Object({ calls: t.Integer(), finished: t.Integer(), passed: t.Integer(), failed: t.Integer() }),
  durationMs: Nullable(t.Integer({ description: 'service-clock ms from start to end' })),
  createdAt: t.String(),
  startedAt: Nullable(t.String()),
  finishedAt: Nullable(t.String()),
})

/** A run as GET answers it: its outline and a result per call. */
export const Run = t.Composite([RunOutline, t.Object({ results: t.Array(RunResult) })])

export const RunAccepted = t.Object({ id: t.String(), status: t.String() })

export const ListQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 25, description: 'page size, 1–100 (default 25)' })),
  cursor: t.Optional(t.String({ description: 'nextCursor from the previous page' })),
})

export const RunListQuery = t.Object({
  suite: t.Optional(t.String({ description: 'sui_…: only this suite’s runs' })),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 25, description: 'page size, 1–100 (default 25)' })),
  cursor: t.Optional(t.String({ description: 'nextCursor from the previous page' })),
})

const Side = (s: Parameters<typeof t.Union>[0][number]) => t.Object({ a: s, b: s })

export const Comparison = t.Object({
  a: t.Object({ id: t.String(), target: t.Union([t.Literal('draft'), t.Integer()]), status: t.String() }),
  b: t.Object({ id: t.String(), target: t.Union([t.Literal('draft'), t.Integer()]), status: t.String() }),
  same: t.Boolean({ description: 'no call differs in status, verdicts, words, fields, tools or answer times' }),
  differences: t.Array(
    t.Object({
      scenario: t.String(),
      name: t.String(),
      instance: t.Integer(),
      status: Nullable(Side(t.String())),
      expectations: t.Array(t.Object({ index: t.Integer(), kind: t.String(), a: Nullable(t.Boolean()), b: Nullable(t.Boolean()) })),
      transcript: Nullable(Side(t.Array(Line))),
      fields: Nullable(Side(t.Record(t.String(), t.Unknown()))),
      tools: Nullable(Side(t.Array(t.String()))),
      timings: t.Array(
        t.Object({
          index: t.Integer({ description: 'the caller’s turn, from 0' }),
          caller: Nullable(t.String({ description: 'its words' })),
          a: t.Integer({ description: 'answer ms in run a' }),
          b: t.Integer({ description: 'answer ms in run b' }),
          diffMs: t.Integer({ description: 'b − a' }),
        }),
        { description: 'the turns whose answer time moved by more than timingMs' },
      ),
    }),
  ),
})

/**
 * Answer-time changes at or below this are noise (the comparison's `timings`). On the manual
 * clock a turn's answer time is counted in the caller's audio, and the scripted caller may run up
 * to AHEAD_MS (200 ms, providers/telephony/callee-pace.ts) past what the agent's side has judged,
 * plus a VAD window (32 ms) and a frame (20 ms), so where the answer lands moves by up to ~250 ms;
 * eight runs of one three-turn script timed each turn between 200 and 380 ms. On the system clock
 * it is host time, with the same order of jitter on a quiet host.
 */
export const TIMING_NOISE_MS = 300

export const CompareQuery = t.Object({
  with: t.String({ description: 'srun_…: another run of the same suite' }),
  timingMs: t.Optional(t.Integer({ minimum: 0, description: `answer-time changes at or below this are noise (default ${TIMING_NOISE_MS})` })),
})
