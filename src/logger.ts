import pino from 'pino'

export type Logger = pino.Logger

/** Structured JSON logs (pino) to stdout; one line per request and per notable event. */
export function createLogger(level: pino.LevelWithSilent = 'info'): Logger {
  return pino({ level, base: { service: 'agent-platform' } })
}
