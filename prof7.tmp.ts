import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from './src/config'
import { createLogger } from './src/logger'
import { startServer } from './src/server'
const dir = mkdtempSync(join(tmpdir(), 'prof-'))
const s = await startServer(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1' }), createLogger('warn'))
const ws = await s.services.workspaces.createDeveloper({ name: 'p' })
const key = (await s.services.keys.issue(ws, 'k', 'full')).key
const agent = await s.services.agents.create({ workspace: ws, plan: 'payg' }, { name: 'Bench' } as any)
const app = s.app
const req = () => new Request('http://localhost/api/v1/agents/' + agent.id, { headers: { authorization: `Bearer ${key}` } })
for (let i = 0; i < 200000; i++) await (await app.handle(req())).text()
await s.stop()
