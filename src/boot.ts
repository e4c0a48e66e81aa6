/**
 * Start-up steps that need the data dir: the console token and the secret key (made once and
 * kept in DATA_DIR when not given in env), and the demo workspace on an empty store.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tenancyFeature } from './features/workspaces'
import { randomId } from './ids'
import type { Services } from './services'

export interface Secret {
  value: string
  /** Where it came from: set in env, read from DATA_DIR, or made now (only then is it printed). */
  source: 'env' | 'file' | 'generated'
}

/**
 * A value from env, else one made on first start and kept in DATA_DIR (directory 0700, file
 * 0600, written to a temporary name and renamed so a crash never leaves an empty file). A file
 * holding fewer than `minLength` characters stops boot instead of being trusted: an empty console
 * token would let anyone in, and silently replacing a secret key would orphan what it sealed.
 */
export function persistentSecret(dataDir: string, file: string, fromEnv: string | undefined, length: number, minLength: number): Secret {
  if (fromEnv) return { value: fromEnv, source: 'env' }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const path = join(dataDir, file)
  if (existsSync(path)) {
    const value = readFileSync(path, 'utf8').trim()
    if (value.length < minLength) {
      throw new Error(`${path} holds ${value.length} characters; at least ${minLength} are needed. Delete the file to make a new one, or set the variable in the environment.`)
    }
    return { value, source: 'file' }
  }
  const value = randomId(length)
  writeFileSync(`${path}.tmp`, `${value}\n`, { mode: 0o600 })
  renameSync(`${path}.tmp`, path)
  return { value, source: 'generated' }
}

/** On an empty store: a demo developer workspace and its full key (shown this once). */
export async function ensureDemoWorkspace(services: Services): Promise<{ id: string; key: string } | null> {
  const { workspaces, keys } = services.of(tenancyFeature)
  if ((await workspaces.countDevelopers()) > 0) return null
  const ws = await workspaces.createDeveloper({ name: 'Demo workspace', plan: 'payg' })
  const issued = await keys.issue(ws, 'demo key', 'full')
  return { id: ws.id, key: issued.key }
}
