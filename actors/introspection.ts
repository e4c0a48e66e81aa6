/**
 * What the runtime tells about its actors without touching them: the console's views (the
 * registered machines, one actor described; their shapes are in inspection.ts) and the counts the
 * metrics read (live and passivated actors by kind, stored actors in a state).
 */
import { describeLive, describeStored, type MachineDefinition, machineDefinition } from './inspection'
import type { ActorLeases } from './leases'
import type { RuntimeAccess } from './reads'
import { actorKey, parseActorKey } from './snapshot-store'
import type { ActorDescription, Registration } from './types'

export interface IntrospectionParts extends RuntimeAccess {
  instanceId: string
  kinds: ReadonlyMap<string, Registration>
  leases: ActorLeases
}

export class Introspection {
  constructor(private readonly i: IntrospectionParts) {}

  machineDefinitions(): MachineDefinition[] {
    return [...this.i.kinds.values()].map((r) => machineDefinition(r.kind, r.spec))
  }

  machineDefinition(name: string): MachineDefinition | null {
    const reg = this.i.kinds.get(name)
    return reg ? machineDefinition(name, reg.spec) : null
  }

  /** See ActorRuntime.describe. */
  async describe(kindOrKey: string, id?: string): Promise<ActorDescription | null> {
    const parsed = id === undefined ? parseActorKey(kindOrKey) : { kind: kindOrKey, id }
    if (!parsed || !this.i.kinds.has(parsed.kind)) return null
    const reg = this.i.registration(parsed.kind)
    const key = actorKey(parsed.kind, parsed.id)
    const doc = await this.i.store().get(key)
    const live = this.i.residency().get(key)
    if (live) {
      const base = { kind: parsed.kind, id: parsed.id, key, owner: this.i.instanceId, spec: reg.spec }
      return describeLive(base, live.actor.getSnapshot(), doc)
    }
    return doc ? describeStored(doc, reg.spec.version, await this.i.leases.ownerOf(key)) : null
  }

  liveByKind(): Map<string, number> {
    const counts = new Map([...this.i.kinds.keys()].map((kind) => [kind, 0]))
    for (const live of this.i.held()?.all() ?? []) counts.set(live.kind, (counts.get(live.kind) ?? 0) + 1)
    return counts
  }

  passivations(): Map<string, number> {
    return new Map([...this.i.kinds.keys()].map((kind) => [kind, this.i.held()?.passivated.get(kind) ?? 0]))
  }

  countInState(kind: string, state: string): Promise<number> {
    this.i.registration(kind)
    return this.i.store().countInState(kind, state)
  }
}
