/**
 * bench:api's per-stage table: where a request's CPU goes, from a CPU profile of the service taken
 * under the same load (`bun --cpu-prof`). Each sample taken while the load ran is given to the
 * innermost frame on its stack that belongs to a stage (a native call counts for the code that
 * made it). The sampler sees JavaScript and the natives it calls, not Bun's HTTP work outside them,
 * so bench/api.ts shares out the CPU a request costs above the bare server's (both read from /proc
 * around the unprofiled rounds) in these proportions.
 */

/** A `.cpuprofile` as Bun writes it (Chrome's format; times in µs since the epoch). */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber?: number }; children?: number[] }[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

/** Stages in the order a request meets them; the first rule that matches a frame's script wins. */
export const STAGES: { stage: string; what: string; match: (url: string, fn: string) => boolean }[] = [
  {
    stage: 'auth',
    what: 'bearer key → principal (hash, cache, lastUsedAt)',
    match: (u, fn) => /src\/features\/workspaces\/(keys|principal-cache)\.ts|src\/http\/authenticator\.ts/.test(u) || (/src\/features\/workspaces\/index\.ts/.test(u) && fn === 'authenticate'),
  },
  { stage: 'workspace resolution', what: 'Service-Workspace → workspace', match: (u) => /src\/features\/workspaces\/(resolver|index)\.ts/.test(u) },
  { stage: 'store read', what: 'the agent: document cache or SQLite, JSON.parse', match: (u) => /src\/store\/|bun:sqlite/.test(u) },
  { stage: 'route and service', what: 'agents route, service, present()', match: (u) => /src\/features\/agents\//.test(u) },
  { stage: 'metrics', what: 'prom-client, src/metrics', match: (u) => /src\/metrics\/|prom-client/.test(u) },
  { stage: 'logging', what: 'request log, pino', match: (u) => /src\/logger\.ts|src\/http\/request-log\.ts|\/pino/.test(u) },
  { stage: 'hooks', what: 'our global hooks: auth brake, draining gate, bodies, v1 context, CORS', match: (u) => /src\/http\/|src\/features\/web\/v1\.ts|src\/app\.ts/.test(u) },
  { stage: 'serialisation', what: 'Elysia mapResponse: JSON.stringify, Response', match: (u, fn) => /elysia\/dist\/adapter\//.test(u) && /map|Response|json|stringify/i.test(fn) },
  { stage: 'framework', what: 'Elysia: routing, context, validation (TypeBox)', match: (u) => /\/elysia\/|@sinclair\/typebox|memoirist/.test(u) },
  { stage: 'background', what: 'timers, actors, housekeeping (not the request)', match: (u) => /\/actors\/|src\/coordination\/|src\/features\//.test(u) },
]
const COMPILED = '/elysia/compiled'
const SERIALISED = '/elysia/dist/adapter/json'
const SERIALISERS = new Set(['json'])
const SERVER = 'unattributed'
const SERVER_WHAT = 'samples with no script on their stack'

export interface StageShare {
  stage: string
  what: string
  samples: number
  share: number
}

/** Sample shares per stage, over the samples taken between `from` and `to` (epoch ms). */
export function stageShares(profile: CpuProfile, from: number, to: number): { total: number; stages: StageShare[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const stageOf = new Map<number, string>()
  const classify = (id: number): string => {
    const known = stageOf.get(id)
    if (known) return known
    let stage = SERVER
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { url, functionName, lineNumber = -1 } = byId.get(at)!.callFrame
      // Natives have no script; Response.json (Elysia's mapResponse, inlined) is the serialisation.
      // Code without a script but with lines is what Elysia compiles at startup (its handlers).
      const script = url && !url.startsWith('[') ? url : lineNumber >= 0 ? COMPILED : SERIALISERS.has(functionName) ? SERIALISED : null
      if (!script) continue
      const rule = STAGES.find((s) => s.match(script, functionName))
      if (rule) {
        stage = rule.stage
        break
      }
    }
    stageOf.set(id, stage)
    return stage
  }
  const counts = new Map<string, number>()
  let t = profile.startTime
  let total = 0
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]
    if (t < from * 1000 || t > to * 1000) continue
    const stage = classify(profile.samples[i])
    counts.set(stage, (counts.get(stage) ?? 0) + 1)
    total++
  }
  const rows = [...STAGES.map(({ stage, what }) => ({ stage, what })), { stage: SERVER, what: SERVER_WHAT }]
  return { total, stages: rows.map(({ stage, what }) => ({ stage, what, samples: counts.get(stage) ?? 0, share: total ? (counts.get(stage) ?? 0) / total : 0 })) }
}

/**
 * CPU seconds a process has used (user + system, all threads), from /proc; null off Linux.
 * `mainThread`: only its main thread, the one running the event loop (its task id is the pid).
 */
export async function cpuSeconds(pid: number, mainThread = false): Promise<number | null> {
  try {
    const stat = await Bun.file(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`).text()
    // Fields after the command name (which may hold spaces, hence the last ')').
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return null
  }
}
