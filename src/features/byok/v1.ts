/** BYOK routes under /byok (docs/spec.md BYOK; paths and bodies are ours: docs/api/billing.md). */
import { Elysia, t } from 'elysia'
import { answers, v1Errors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { JOBS } from '../../providers/catalog'
import type { AgentService } from '../agents/public'
import type { ByokChoices } from './choices'
import { AgentChoice, AgentChoiceBody, ByokStatus, KeyBody, KeyPatchBody, PreviewBody, SwitchBody, Voice } from './model'
import type { ByokService } from './service'

export function byokV1(deps: { context: KernelHttp['v1']; byok: ByokService; choices: ByokChoices; agents: AgentService }) {
  const { byok, choices } = deps
  const status = answers({ 200: ByokStatus, ...v1Errors(403) })
  return new Elysia({ prefix: '/byok', detail: { tags: ['BYOK'] } })
    .use(deps.context)
    .get('', ({ workspace }) => byok.status(workspace), {
      detail: { responses: status, summary: 'BYOK status: the switch, whose keys run, each key (last four characters), its models and the one running' },
    })
    .patch('', ({ workspace, body }) => byok.setEnabled(workspace, body.enabled), {
      scope: 'full',
      body: SwitchBody,
      detail: {
        responses: answers({ 200: ByokStatus, ...v1Errors(403, 409) }),
        summary: 'Switch BYOK on or off',
        description:
          "409 when switching on before all three keys are added, verified and have a model, or in a customer while the developer's BYOK is off. The developer switching off switches its customers off.",
      },
    })
    .use(keyRoutes(deps))
    .get('/voices', async ({ workspace }) => ({ items: await choices.voices(workspace) }), {
      detail: { responses: answers({ 200: t.Object({ items: t.Array(Voice) }), ...v1Errors(409, 502) }), summary: "The voices of the workspace's voice key (409 while BYOK is off)" },
    })
    .post(
      '/voices/preview',
      async ({ workspace, body }) => {
        const clip = await choices.preview(workspace, body.voice, body.text)
        return new Response(clip.audio, { headers: { 'content-type': clip.contentType } })
      },
      {
        scope: 'build',
        body: PreviewBody,
        detail: {
          responses: {
            ...answers(v1Errors(403, 409, 502)),
            200: {
              description: 'the clip: audio/mpeg (ElevenLabs) or audio/wav (OpenAI)',
              content: { 'audio/mpeg': { schema: { type: 'string', format: 'binary' } }, 'audio/wav': { schema: { type: 'string', format: 'binary' } } },
            },
          },
          summary: 'Hear a voice of the key say `text` (up to 200 characters)',
        },
      },
    )
    .get(
      '/agents/:id',
      async ({ workspace, params }) => {
        const agent = await deps.agents.get(workspace.id, params.id)
        return choices.get(workspace, agent.id)
      },
      {
        params: t.Object({ id: t.String() }),
        detail: { responses: answers({ 200: AgentChoice, ...v1Errors() }), summary: "An agent's model and voice on the keys, with `stale` for a choice the key no longer reaches" },
      },
    )
    .put(
      '/agents/:id',
      async ({ workspace, params, body }) => {
        const agent = await deps.agents.get(workspace.id, params.id)
        return choices.set(workspace, agent.id, body)
      },
      {
        scope: 'build',
        params: t.Object({ id: t.String() }),
        body: AgentChoiceBody,
        detail: { responses: answers({ 200: AgentChoice, ...v1Errors(403, 409, 502) }), summary: "Choose an agent's model and voice among what the keys reach (null reverts)" },
      },
    )
}

/** One literal path per job (`/byok/keys/stt`, `/llm`, `/tts`): a job is not a resource id. */
function keyRoutes(deps: { context: KernelHttp['v1']; byok: ByokService }) {
  const { byok } = deps
  const app = new Elysia({ prefix: '/keys' }).use(deps.context)
  // Elysia registers a route on the instance it is called on; routes added in a loop are only
  // left out of the instance's type, which nothing reads (the OpenAPI document reads the routes).
  for (const job of JOBS) {
    app
      .put(`/${job}`, ({ workspace, body }) => byok.putKey(workspace, job, body), {
        scope: 'full',
        body: KeyBody,
        detail: {
          responses: answers({ 200: ByokStatus, ...v1Errors(403, 409, 502) }),
          summary: `Add or replace the ${job} key (verified with the provider before it is saved)`,
          description:
            '400 for a provider id not valid for the job (the error lists the valid ones), a missing credential, or a key the provider rejected (nothing is saved); 502 when the provider cannot be reached; 409 while BYOK is on and the new key has no model. Replacing with the same provider keeps the model; `credentials.model` picks one.',
        },
      })
      .patch(`/${job}`, ({ workspace, body }) => byok.patchKey(workspace, job, body), {
        scope: 'full',
        body: KeyPatchBody,
        detail: { responses: answers({ 200: ByokStatus, ...v1Errors(403, 409, 502) }), summary: `Change the ${job} key's model, or reload its models (refreshModels: true)` },
      })
      .delete(`/${job}`, ({ workspace }) => byok.removeKey(workspace, job), {
        scope: 'full',
        detail: { responses: answers({ 200: ByokStatus, ...v1Errors(403, 409) }), summary: `Remove the ${job} key (409 while BYOK is on)` },
      })
  }
  return app
}
