/**
 * Console: the machines behind every stateful resource, for the Stately visualiser, and one
 * actor's current state (docs/design.md "Machines and actors").
 */
import { Elysia, t } from 'elysia'
import type { ActorRuntime } from '../../../actors'
import { type MachineName, machineDefinition, machineNames, machines } from '../../../machines'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { notThere } from '../../refusals'

export function inspectionConsole(deps: { auth: KernelHttp['console']; runtime: ActorRuntime; pipeline?: (callId: string) => { state: string; why?: string } | null }) {
  const isName = (name: string): name is MachineName => (machineNames as string[]).includes(name)
  return new Elysia({ detail: { tags: ['Console'] } })
    .use(deps.auth)
    .get(
      '/machines',
      () => ({
        items: machineNames.map((name) => ({
          name,
          id: machines[name].machine.id,
          version: machines[name].version,
          effects: [...machines[name].effects],
          live: deps.runtime.hasKind(name),
        })),
      }),
      {
        detail: {
          responses: answers({
            200: t.Object({ items: t.Array(t.Object({ name: t.String(), id: t.String(), version: t.Integer(), effects: t.Array(t.String()), live: t.Boolean() })) }),
            ...consoleErrors(),
          }),
          summary: 'List the state machines (name, chart id, version)',
        },
      },
    )
    .get(
      '/machines/:name',
      ({ params }) => {
        if (!isName(params.name)) throw notThere(`no machine ${params.name}; see GET /console/machines`)
        return { name: params.name, version: machines[params.name].version, definition: machineDefinition(params.name) }
      },
      {
        params: t.Object({ name: t.String() }),
        detail: {
          responses: answers({ 200: t.Object({ name: t.String(), version: t.Integer(), definition: t.Unknown() }), ...consoleErrors(404) }),
          summary: 'A machine definition as JSON, for the Stately visualiser',
        },
      },
    )
    .get(
      '/actors/:id',
      async ({ params }) => {
        const description = await deps.runtime.describe(params.id)
        if (!description) throw notThere(`no actor ${params.id}; ids are <kind>:<resource id>, e.g. customerWorkspace:org_…`)
        // A live call also shows its voice pipeline (listening, thinking, speaking, interrupted, …) and why it is there, when its media stream is in this process.
        const pipeline = params.id.startsWith('call:') ? (deps.pipeline?.(params.id.slice(5)) ?? null) : undefined
        return { ...description, ...(pipeline !== undefined ? { pipeline } : {}) }
      },
      {
        params: t.Object({ id: t.String({ description: '<kind>:<resource id>' }) }),
        detail: { responses: answers({ 200: t.Record(t.String(), t.Unknown()), ...consoleErrors(404) }), summary: 'One actor: state, context, version, deadlines, whether it is live and where' },
      },
    )
}
