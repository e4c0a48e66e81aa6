/**
 * What both carriers' media-stream protocols share on the wire: JSON text messages of bounded size
 * with an `event` member, objects and non-empty strings checked as read, counters sent as decimal
 * strings ("chunk": "2", numbers taken too), and base64 payloads.
 */
import { ProtocolError } from './port'

export const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

export const obj = (v: unknown, what: string): Record<string, unknown> => {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ProtocolError(`${what} must be an object`)
  return v as Record<string, unknown> // cast: checked to be a non-array object just above
}

export const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string' || !v) throw new ProtocolError(`${what} must be a non-empty string`)
  return v
}

export const counter = (v: unknown, what: string): number => {
  const n = typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : NaN
  if (Number.isNaN(n)) throw new ProtocolError(`${what} must be a non-negative integer`)
  return n
}

/** A message as the socket delivered it (text, or already parsed JSON) → its object; text over `maxBytes` is refused unparsed. */
export function messageObject(message: unknown, maxBytes: number): Record<string, unknown> {
  if (typeof message !== 'string') return obj(message, 'message')
  if (message.length > maxBytes) throw new ProtocolError(`message of ${message.length} bytes is over ${maxBytes}`)
  let parsed: unknown
  try {
    parsed = JSON.parse(message)
  } catch {
    throw new ProtocolError('message is not JSON')
  }
  return obj(parsed, 'message')
}
