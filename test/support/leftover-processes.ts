/**
 * Preloaded into every test run (bunfig.toml): once the last test file is done, any process the
 * run started and left running is killed and named. A forgotten child (a service a crash test
 * restarted, a redis-server) outlives the runner and holds its inherited stdout/stderr open, so a
 * reader of the output through a pipe (CI's `npm test | tee`) never sees the end and the run hangs
 * until CI's deadline. Bun's test runner emits no `exit` event to hook instead.
 */
import { afterAll } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'

/** The processes whose parent is this one (Linux's /proc; elsewhere none are found). */
function children(): { pid: number; command: string }[] {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return []
  }
  const found: { pid: number; command: string }[] = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // The stat line is "pid (comm) state ppid ..."; comm may hold spaces, so read after its ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid !== process.pid) continue
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim()
      found.push({ pid: Number(entry), command })
    } catch {
      // It ended while being read.
    }
  }
  return found
}

afterAll(() => {
  for (const child of children()) {
    console.error(`a test left process ${child.pid} running (${child.command.slice(0, 120)}); killed`)
    try {
      process.kill(child.pid, 'SIGKILL')
    } catch {
      // Gone already.
    }
  }
})
