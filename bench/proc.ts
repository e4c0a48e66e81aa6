/**
 * What the benchmarks read of the machine and of the service's process from /proc (Linux): how
 * busy the cores were, how long a thread waited for one, resident memory, the load average. The
 * process's CPU time is service.ts's `cpuMs` and `cpuByRole`.
 */
import { readFileSync } from 'node:fs'

export interface HostCpu {
  busy: number
  total: number
}

/** The whole machine's busy and total CPU time (jiffies) from /proc/stat: how contended the cores were. */
export function hostCpu(): HostCpu {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const idle = f[3]! + f[4]!
  const total = f.reduce((a, b) => a + b, 0)
  return { busy: total - idle, total }
}

/** The share of the machine's cores (%) busy between two readings. */
export const busyShare = (a: HostCpu, b: HostCpu) => (100 * (b.busy - a.busy)) / Math.max(1, b.total - a.total)

/** ns a process's main thread has run and has waited runnable for a core, from /proc/<pid>/task/<pid>/schedstat: a busy machine shows as waiting. */
export function schedNs(pid: number): { run: number; wait: number } {
  const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number)
  return { run: run!, wait: wait! }
}

/** A process's resident memory, KB (NaN when /proc does not say). */
export const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)

/** The load average over 1, 5 and 15 minutes, as /proc/loadavg writes it. */
export const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
