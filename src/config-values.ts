/**
 * Reading one environment variable as config: trimmed, empty as unset, and a bad value refused
 * with a ConfigError naming the variable (config.ts turns the whole environment into Config).
 */
import { checkedBaseUrl } from './net/base-url'

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`)
    this.name = 'ConfigError'
  }
}

export type Env = Record<string, string | undefined>

export function optional(env: Env, name: string): string | undefined {
  const v = env[name]?.trim()
  return v ? v : undefined
}

export function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const v = optional(env, name)
  if (v === undefined) return fallback
  if (!(values as readonly string[]).includes(v)) {
    throw new ConfigError(name, `must be one of ${values.join(', ')} (got "${v}")`)
  }
  return v as T
}

export function flag(env: Env, name: string): boolean {
  const v = optional(env, name)
  if (v === undefined) return false
  if (['1', 'true', 'yes', 'on'].includes(v.toLowerCase())) return true
  if (['0', 'false', 'no', 'off'].includes(v.toLowerCase())) return false
  throw new ConfigError(name, `must be true or false (got "${v}")`)
}

export function url(env: Env, name: string, protocols: string[]): string | undefined {
  const v = optional(env, name)
  if (v === undefined) return undefined
  let parsed: URL
  try {
    parsed = new URL(v)
  } catch {
    throw new ConfigError(name, `is not a URL (got "${v}")`)
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')} (got "${parsed.protocol}")`)
  }
  return v
}

/** The LLM adapters' base-URL rule (net/base-url.ts), so boot refuses what a chat would. */
export function llmBaseUrl(env: Env, name: string): string | undefined {
  const v = optional(env, name)
  if (v === undefined) return undefined
  const checked = checkedBaseUrl(v)
  // The value is not echoed: a URL refused for carrying a password would print it in the logs.
  if ('refused' in checked) throw new ConfigError(name, checked.refused)
  return checked.url
}
