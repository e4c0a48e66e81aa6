/** BYOK route schemas (docs/spec.md BYOK: paths and bodies are ours, docs/api/billing.md). */
import { t } from 'elysia'

const KeyView = t.Union([
  t.Object({
    provider: t.String(),
    key: t.Union([t.String(), t.Null()], { description: 'the last four characters (`…9f3a`); the key itself is never shown' }),
    credentials: t.Record(t.String(), t.String(), { description: 'the credentials that are not secret (baseUrl, endpoint, deployment, apiVersion)' }),
    models: t.Array(t.String(), { description: 'what the provider offered this key' }),
    model: t.Union([t.String(), t.Null()], { description: 'the one running' }),
    verifiedAt: t.String(),
  }),
  t.Null(),
])

export const ByokStatus = t.Object({
  enabled: t.Boolean({ description: "this workspace's switch" }),
  using: t.Union([t.Literal('own'), t.Literal('developer'), t.Literal('none')], { description: 'whose keys calls and replies run on now' }),
  stt: KeyView,
  llm: KeyView,
  tts: KeyView,
})

export const SwitchBody = t.Object({ enabled: t.Boolean() }, { additionalProperties: false })

// Vendor keys are tens to a few hundred characters; 1,000 is room for any of them, not a limit on one.
const Secret = t.String({ minLength: 1, maxLength: 1_000 })
const Url = t.String({ minLength: 1, maxLength: 2_048 })
const Name = t.String({ minLength: 1, maxLength: 200 })

export const KeyBody = t.Object(
  {
    provider: t.String({ minLength: 1, maxLength: 40, description: 'stt: deepgram, openai, assemblyai; llm: openai, anthropic, azure, openai-compatible; tts: elevenlabs, openai, cartesia' }),
    credentials: t.Object(
      {
        apiKey: t.Optional(Secret),
        baseUrl: t.Optional(Url),
        endpoint: t.Optional(Url),
        deployment: t.Optional(Name),
        apiVersion: t.Optional(t.String({ minLength: 1, maxLength: 40 })),
        model: t.Optional(Name),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)

export const KeyPatchBody = t.Object({ model: t.Optional(Name), refreshModels: t.Optional(t.Boolean()) }, { additionalProperties: false })

export const Voice = t.Object({
  id: t.String(),
  name: t.String(),
  sample: t.Union([t.String(), t.Null()], { description: 'a clip the provider hosts' }),
  realtime: t.Optional(t.Boolean({ description: "true: a voice of the llm key's speech-to-speech (Realtime) models, chosen with one of them as the agent's model" })),
})

export const PreviewBody = t.Object(
  {
    voice: t.String({ minLength: 1, maxLength: 200, description: 'a voice id from GET /byok/voices' }),
    text: t.String({ minLength: 1, maxLength: 200, description: 'up to 200 characters (docs/spec.md, Limits)' }),
    language: t.Optional(t.String({ minLength: 1, maxLength: 40 })),
  },
  { additionalProperties: false },
)

/** Who ends the caller's turn on a speech-to-speech model (docs/api/voice.md, Speech-to-speech): its silence VAD or its semantic one. */
const TurnDetection = t.Union([t.Literal('server_vad'), t.Literal('semantic_vad'), t.Literal('service_vad')], {
  description: "a Realtime model only: its silence VAD, its semantic VAD, or the service's own VAD (absent or null: server_vad)",
})

export const AgentChoice = t.Object({
  agent: t.String(),
  model: t.Union([t.String(), t.Null()]),
  voice: t.Union([t.String(), t.Null()]),
  stale: t.Object({ model: t.Boolean(), voice: t.Boolean() }, { description: 'true when an earlier choice is no longer reachable by the key' }),
  turnDetection: t.Optional(TurnDetection),
})

export const AgentChoiceBody = t.Object(
  { model: t.Optional(t.Union([Name, t.Null()])), voice: t.Optional(t.Union([Name, t.Null()])), turnDetection: t.Optional(t.Union([TurnDetection, t.Null()])) },
  { additionalProperties: false },
)
