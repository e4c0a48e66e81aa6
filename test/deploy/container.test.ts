/**
 * The container files, read as Docker and Compose would (no Docker engine runs here): the image
 * runs the service itself under an init as a non-root user with the speech engines installed, the
 * build context leaves secrets and local data out, and every variable the service reads reaches it
 * through compose's env_file and is documented in .env.example.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'

const ROOT = join(import.meta.dir, '..', '..')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')

interface Instruction {
  op: string
  args: string
}

/** Dockerfile instructions (continuations joined, comments dropped), split into build stages. */
function dockerfileStages(text: string): Instruction[][] {
  const lines = text.split('\n').filter((l) => !/^\s*#/.test(l))
  const joined = lines.join('\n').replace(/\\\n/g, ' ')
  const stages: Instruction[][] = []
  for (const line of joined.split('\n')) {
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line)
    if (!m) continue
    const op = m[1]!.toUpperCase()
    if (op === 'FROM') stages.push([])
    stages[stages.length - 1]?.push({ op, args: m[2]!.trim() })
  }
  return stages
}

/** An exec-form instruction's argv (JSON array); null for the shell form. */
const execForm = (args: string): string[] | null => (args.startsWith('[') ? (JSON.parse(args) as string[]) : null)

/**
 * Docker's .dockerignore rules: patterns from the context's root (a leading `/` or trailing `/`
 * changes nothing), `*` and `?` within one path segment, `**` across segments, a match on a folder
 * excludes what is in it, and `!` re-includes; the last matching line wins.
 */
function dockerIgnored(patterns: string[], path: string): boolean {
  const rules = patterns.map((p) => {
    const negate = p.startsWith('!')
    const clean = (negate ? p.slice(1) : p).replace(/^\/+|\/+$/g, '')
    const source = clean
      .split(/(\*\*\/?|\*|\?)/)
      .map((part) => (part.startsWith('**') ? '(?:.*/)?' : part === '*' ? '[^/]*' : part === '?' ? '[^/]' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('')
    return { negate, re: new RegExp(`^${source}$`) }
  })
  const segments = path.split('/')
  const prefixes = segments.map((_, i) => segments.slice(0, i + 1).join('/'))
  let ignored = false
  for (const rule of rules) if (prefixes.some((p) => rule.re.test(p))) ignored = !rule.negate
  return ignored
}

/** Variable names in a .env file: `NAME=value` lines and documented `# NAME=value` ones. */
function envFileNames(text: string): { set: Map<string, string>; documented: Set<string> } {
  const set = new Map<string, string>()
  const documented = new Set<string>()
  for (const line of text.split('\n')) {
    const m = /^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim())
    if (!m) continue
    documented.add(m[2]!)
    if (!m[1]) set.set(m[2]!, m[3]!)
  }
  return { set, documented }
}

/** Every variable src/config.ts reads: by its helpers' calls in the source, and by what loadConfig reads. */
function configVariables(): Set<string> {
  const source = read('src/config.ts')
  const names = new Set<string>()
  for (const m of source.matchAll(/\b(?:optional|optionalCount|oneOf|flag|url|llmBaseUrl|listenPort)\(\s*env,\s*'([A-Z][A-Z0-9_]*)'/g)) names.add(m[1]!)
  for (const m of source.matchAll(/\bneed\('([A-Z][A-Z0-9_]*)'\)/g)) names.add(m[1]!)
  return names
}

/** What loadConfig actually reads from `env`, whatever it is: a check that the source scan misses none. */
function readsOf(env: Record<string, string>): Set<string> {
  const seen = new Set<string>()
  const proxy = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string') seen.add(key)
      return target[key as string]
    },
  })
  loadConfig(proxy)
  return seen
}

/** Variables in the tables headed "variable" of the README (and docs/, should the table move there). */
function documentedTableVariables(): Map<string, string> {
  const found = new Map<string, string>()
  const files = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ]
  for (const file of files) {
    let inTable = false
    for (const line of read(file).split('\n')) {
      if (!line.startsWith('|')) {
        inTable = false
        continue
      }
      const first = line.split('|')[1]!.trim()
      if (/^variables?$/i.test(first)) {
        inTable = true
        continue
      }
      if (!inTable) continue
      for (const m of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) found.set(m[1]!, file)
    }
  }
  return found
}

// Read by the service outside src/config.ts, on purpose not for operators.
const TEST_ONLY_VARIABLES = new Set(['SERVICE_CRASH_AT'])
// What docker-compose.yml itself sets for its layout (the container's port and volume, its own
// MongoDB and Redis); everything else comes from .env unchanged.
const COMPOSE_LAYOUT = new Set(['PORT', 'HOST', 'DATA_DIR', 'SERVICE_CLOCK', 'MONGODB_URL', 'REDIS_URL'])

describe('Dockerfile', () => {
  const stages = dockerfileStages(read('Dockerfile'))
  const final = stages[stages.length - 1]!
  const last = (op: string) => final.filter((i) => i.op === op).at(-1)

  test('the main process is the service under tini, not npm', () => {
    const entrypoint = execForm(last('ENTRYPOINT')?.args ?? '[]')
    const cmd = execForm(last('CMD')?.args ?? '')
    expect(entrypoint).not.toBeNull()
    expect(cmd).not.toBeNull()
    const argv = [...entrypoint!, ...cmd!]
    // Exec form only: a shell form would put /bin/sh between tini and the service.
    expect(argv).toEqual(['/usr/bin/tini', '--', 'bun', 'src/index.ts'])
    expect(argv.some((a) => /\bnpm\b|\bnpx\b/.test(a))).toBe(false)
  })

  test('the engines the local speech providers need are installed in the final image', () => {
    const installs = final
      .filter((i) => i.op === 'RUN' && /apt-get install/.test(i.args))
      .map((i) => i.args)
      .join(' ')
    const packages = new Set(installs.split(/\s+/))
    for (const name of ['tini', 'espeak-ng', 'pocketsphinx', 'libpocketsphinx3', 'pocketsphinx-en-us', 'ca-certificates']) expect(packages.has(name)).toBe(true)
  })

  test('Bun is in the final image and the service sources are copied', () => {
    expect(final.some((i) => i.op === 'COPY' && /\/usr\/local\/bin\/bun\b/.test(i.args))).toBe(true)
    expect(final.some((i) => i.op === 'COPY' && /^\.\s+\.$/.test(i.args))).toBe(true)
    // npm ci in the build stage reads .npmrc (onnxruntime-node's download is skipped).
    expect(stages[0]!.some((i) => i.op === 'COPY' && i.args.split(/\s+/).includes('.npmrc'))).toBe(true)
  })

  test('it runs as a non-root user that owns only the data dir', () => {
    const user = last('USER')?.args
    expect(user).toBeDefined()
    expect(['root', '0'].includes(user!.split(':')[0]!)).toBe(false)
    expect(final.some((i) => i.op === 'RUN' && new RegExp(`chown ${user}(:${user})? /data`).test(i.args))).toBe(true)
    const env = last('ENV')?.args ?? ''
    expect(env).toContain('DATA_DIR=/data')
    expect(env).toContain('NODE_ENV=production')
  })

  test('the health check asks /health on the service port', () => {
    const check = last('HEALTHCHECK')?.args ?? ''
    expect(check).toContain('/health')
    expect(check).toContain('process.env.PORT')
    const argv = execForm(check.slice(check.indexOf('CMD') + 3).trim())
    expect(argv?.[0]).toBe('bun')
  })
})

describe('.dockerignore', () => {
  const patterns = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))

  test('lists the secrets, the local data, node_modules and .git', () => {
    for (const entry of ['.env', '.env.*', 'data/', 'node_modules', '.git', 'test-artifacts/']) expect(patterns).toContain(entry)
  })

  test('keeps secrets and local state out of the context and the sources in', () => {
    for (const path of [
      '.env',
      '.env.production',
      'data/service.db',
      'data/console-token',
      'node_modules/elysia/package.json',
      '.git/HEAD',
      'test-artifacts/x.png',
      'certs/server.key',
      'src/secret-key',
      'service.db-wal',
    ]) {
      expect([path, dockerIgnored(patterns, path)]).toEqual([path, true])
    }
    for (const path of ['.env.example', 'src/index.ts', 'package.json', 'package-lock.json', '.npmrc', 'actors/runtime.ts', 'machines/call.ts', 'src/features/web/assets/widget.js']) {
      expect([path, dockerIgnored(patterns, path)]).toEqual([path, false])
    }
  })
})

describe('docker-compose.yml and .env.example', () => {
  const compose = Bun.YAML.parse(read('docker-compose.yml')) as { services: Record<string, any> }
  const api = compose.services.api
  const example = envFileNames(read('.env.example'))
  const config = configVariables()

  test('the source scan finds every variable loadConfig reads', () => {
    const variants: Record<string, string>[] = [
      {},
      { CHATAPP_PROVIDER: 'whatsapp', WHATSAPP_ACCESS_TOKEN: 't', WHATSAPP_APP_SECRET: 's', WHATSAPP_VERIFY_TOKEN: 'v' },
      { TELEPHONY_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: 'AC1', TWILIO_AUTH_TOKEN: 'x' },
      { TELEPHONY_PROVIDER: 'telnyx', TELNYX_API_KEY: 'KEY1', TELNYX_CONNECTION_ID: '1', TELNYX_PUBLIC_KEY: 'k' },
      { INSPECT_PORT: '3000' },
    ]
    for (const env of variants) for (const name of readsOf(env)) expect([name, config.has(name)]).toEqual([name, true])
    expect(config.size).toBeGreaterThan(30)
  })

  test('the service reads no variable outside src/config.ts but test hooks', () => {
    const glob = new Bun.Glob('{src,actors,machines}/**/*.ts')
    for (const file of glob.scanSync(ROOT)) {
      if (file === 'src/config.ts') continue
      for (const m of read(file).matchAll(/(?:process\.env|Bun\.env)(?:\.([A-Z][A-Z0-9_]*)|\[\s*'([A-Z][A-Z0-9_]*)'\s*\])/g)) {
        const name = m[1] ?? m[2]!
        expect([file, name, TEST_ONLY_VARIABLES.has(name) || config.has(name)]).toEqual([file, name, true])
      }
    }
  })

  test('the api service takes every variable from .env', () => {
    const files = [api.env_file].flat().map((f: string | { path: string }) => (typeof f === 'string' ? f : f.path))
    expect(files).toContain('.env')
    // The compose file adds only its own layout; it never names (and so never blanks) another variable.
    expect(Object.keys(api.environment ?? {}).filter((k) => !COMPOSE_LAYOUT.has(k))).toEqual([])
    // MongoDB and Redis are compose's own unless .env names others.
    expect(api.environment.MONGODB_URL).toMatch(/^\$\{MONGODB_URL:-mongodb:\/\/mongo:27017\//)
    expect(api.environment.REDIS_URL).toMatch(/^\$\{REDIS_URL:-redis:\/\/redis:6379\}$/)
    expect(api.build).toBe('.')
    expect(api.volumes).toContain('api-data:/data')
  })

  test('.env.example documents every variable of src/config.ts and of the README table', () => {
    const missing = [...config].filter((name) => !example.documented.has(name))
    expect(missing).toEqual([])
    const table = documentedTableVariables()
    expect(table.size).toBeGreaterThan(20)
    expect([...table.keys()].filter((name) => !example.documented.has(name))).toEqual([])
    // And nothing the service would not read (a typo there would be silently ignored).
    expect([...example.documented].filter((name) => !config.has(name))).toEqual([])
  })

  test('the variables that crash-looped the first deploy are there', () => {
    for (const name of ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'DEEPGRAM_API_KEY', 'ELEVENLABS_API_KEY', 'SMTP_URL', 'WHATSAPP_ACCESS_TOKEN', 'WHATSAPP_APP_SECRET', 'WHATSAPP_VERIFY_TOKEN']) {
      expect([name, example.set.has(name)]).toEqual([name, true])
    }
  })

  test('the service boots on .env.example as compose passes it', () => {
    const env: Record<string, string> = Object.fromEntries(example.set)
    for (const [name, value] of Object.entries(api.environment as Record<string, string>)) {
      env[name] = value.replace(/^\$\{[A-Z_]+:-(.*)\}$/, '$1')
    }
    const config = loadConfig(env)
    expect(config.port).toBe(3000)
    expect(config.dataDir).toBe('/data')
    expect(config.mongodbUrl).toBe('mongodb://mongo:27017/agent_platform')
    expect(config.redisUrl).toBe('redis://redis:6379')
    expect(config.telephonyProvider).toBe('sandbox')
  })

  test('the inspector port is published only by the optional override, on localhost', () => {
    expect(api.ports.some((p: string) => /8080/.test(String(p)))).toBe(false)
    const inspect = Bun.YAML.parse(read('docker-compose.inspect.yml')) as { services: Record<string, any> }
    const ports: string[] = inspect.services.api.ports
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Compose interpolation, not a JS template
    expect(ports).toEqual(['127.0.0.1:${INSPECT_PORT:-8080}:${INSPECT_PORT:-8080}'])
    expect(inspect.services.api.environment.INSPECT).toBe('1')
  })

  test('docker stop waits for the drain: stop_grace_period is a minute past the drain deadline', () => {
    const grace = /^(\d+)(m|s)$/.exec(String(api.stop_grace_period))
    expect(grace).not.toBeNull()
    const graceSeconds = Number(grace![1]) * (grace![2] === 'm' ? 60 : 1)
    const drain = /DEFAULT_DRAIN_SECONDS = (\d+)/.exec(read('src/config.ts'))
    expect(graceSeconds).toBeGreaterThanOrEqual(Number(drain?.[1] ?? 300) + 60)
  })

  test('MongoDB and Redis are healthy before the service starts', () => {
    expect(api.depends_on).toEqual({ mongo: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } })
    expect(compose.services.mongo.healthcheck.test).toContain('mongosh')
    expect(compose.services.redis.healthcheck.test).toContain('redis-cli')
  })
})
