/**
 * Start-up steps that need the data dir: the console token and the secret key (made once and
 * kept in DATA_DIR when not given in env), and the demo workspace on an empty store.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomId } from './ids'
import type { Services } from './services'

/** A value from env, else one made on first start and kept in DATA_DIR (mode 0600). */
export function persistentSecret(dataDir: string, file: string, fromEnv: string | undefined, length: number): string {
  if (fromEnv) return fromEnv
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, file)
  if (existsSync(path)) return readFileSync(path, 'utf8').trim()
  const value = randomId(length)
  writeFileSync(path, `${value}\n`, { mode: 0o600 })
  return value
}

/** On an empty store: a demo developer workspace and its full key (shown this once). */
export async function ensureDemoWorkspace(services: Services): Promise<{ id: string; key: string } | null> {
  if ((await services.workspaces.countDevelopers()) > 0) return null
  const ws = await services.workspaces.createDeveloper({ name: 'Demo workspace', plan: 'payg' })
  const issued = await services.keys.issue(ws, 'demo key', 'full')
  return { id: ws.id, key: issued.key }
}
