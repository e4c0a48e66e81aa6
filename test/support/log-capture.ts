/** A pino logger that keeps its lines in memory, parsed, for tests that read what was logged. */
import pino from 'pino'
import type { Logger } from '../../src/logger'

export function capturedLogger(level: pino.LevelWithSilent = 'info'): { logger: Logger; lines: Record<string, any>[] } {
  const lines: Record<string, any>[] = []
  const logger = pino({ level, base: { service: 'agent-platform' } }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  return { logger, lines }
}
