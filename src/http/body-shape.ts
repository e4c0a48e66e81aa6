/**
 * The shape rules every JSON body meets before any route schema sees it (json-body.ts applies
 * them). Each runs in one pass over the body, so a hostile body costs what its size costs:
 * - nesting is bounded, checked on the text before JSON.parse builds anything: a body of 300,000
 *   nested objects (1.8 MB) took 280 ms to parse alone, and past the parse every recursive step
 *   downstream (schema checks, their error messages, which stringify the whole body) was
 *   quadratic, ran out of memory or out of stack;
 * - so are members, per object and in all, in the same pass: a wide object is slow to build and
 *   slower to walk (every schema check and error message goes over each member);
 * - `__proto__` members are refused (JSON.parse keeps them as own properties, but spreads and
 *   merges drop them silently);
 * - texts (member names and string values) must be valid Unicode without NUL: a lone surrogate
 *   cannot be encoded as UTF-8 (stores and vendors replace or refuse it later, far from the
 *   caller), and a NUL cuts texts short in C-backed tools (telephony, TTS, SMTP).
 */

/**
 * How deeply a body may nest, the body itself counting as 1. The deepest body a route describes
 * nests 5 levels (a sequence's steps with their conditions); 64 leaves room for any sane client
 * while keeping every downstream recursion far from trouble.
 */
export const MAX_BODY_DEPTH = 64

export type BodyPath = (string | number)[]

export interface ShapeFault {
  path: BodyPath
  message: string
  kind: 'value_error' | 'extra_forbidden'
}

const QUOTE = 34
const BACKSLASH = 92
const COMMA = 44
const OPEN_OBJECT = 123
const CLOSE_OBJECT = 125
const OPEN_ARRAY = 91
const CLOSE_ARRAY = 93

/**
 * How many members one object of a body may have. The widest object a route describes is an
 * agent (about 40 fields); open maps are smaller (metadata: 50 keys, variables: 20, docs/spec.md
 * Limits). 1,000 is twenty times the widest. One object of 150,000 members (1.7 MB) took 386 ms
 * to refuse, and 8 clients sending it held every other request for most of a second.
 */
export const MAX_OBJECT_MEMBERS = 1_000

/**
 * How many object members a body may have in all. The largest body a route describes (an agent
 * with every list full: 12 steps, 30 fields with their choices, 10 transfers; a sequence of 50
 * steps) has under 1,000; 10,000 leaves ten times that, and stops 150,000 small objects as the
 * per-object bound stops one wide one. Array items are not counted: the widest legitimate array is
 * a campaign's 100,000 recipients, and items parse at a fraction of a member's cost.
 */
export const MAX_BODY_MEMBERS = 10_000

export interface StructureLimits {
  depth: number
  objectMembers: number
  bodyMembers: number
}

const LIMITS: StructureLimits = { depth: MAX_BODY_DEPTH, objectMembers: MAX_OBJECT_MEMBERS, bodyMembers: MAX_BODY_MEMBERS }

/**
 * Where `text` nests deeper than allowed, or has too many members in one object or in all: the
 * path of the member that opens one level too many, or is one member too many, with what is wrong;
 * or null. One pass over the text that only follows strings, brackets and commas, stopping at the
 * first fault; what is not JSON is left for JSON.parse to refuse.
 */
export function structureFault(text: string, limits: StructureLimits = LIMITS): { path: BodyPath; message: string } | null {
  // Per open level: whether it is an array, its current member (an index, or a key's raw text), and
  // how many members it has had (objects).
  const isArray: boolean[] = []
  const member: (number | [number, number])[] = []
  const members: number[] = []
  let total = 0
  let expectKey = false
  const n = text.length
  let i = 0
  const pathHere = () => member.map((m) => (typeof m === 'number' ? m : keyText(text, m)))
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = closingQuote(text, i)
      if (end < 0) return null
      const top = isArray.length - 1
      if (expectKey && top >= 0 && !isArray[top]) {
        member[top] = [i, end + 1]
        expectKey = false
        const count = ++members[top]
        total++
        if (count > limits.objectMembers) return { path: pathHere(), message: `is member ${count} of its object, which may have at most ${limits.objectMembers}` }
        if (total > limits.bodyMembers) return { path: pathHere(), message: `is member ${total} of the body, which may have at most ${limits.bodyMembers} in all` }
      }
      i = end + 1
      continue
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (isArray.length >= limits.depth) return { path: pathHere(), message: `nests deeper than ${limits.depth} levels, the most a body may` }
      isArray.push(c === OPEN_ARRAY)
      member.push(0)
      members.push(0)
      expectKey = c === OPEN_OBJECT
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      isArray.pop()
      member.pop()
      members.pop()
      expectKey = false
    } else if (c === COMMA) {
      const top = isArray.length - 1
      if (top >= 0 && isArray[top]) member[top] = (member[top] as number) + 1
      else expectKey = true
    }
    i++
  }
  return null
}

/** The index of the quote closing the string opened at `open`, or -1. */
function closingQuote(text: string, open: number): number {
  let at = open + 1
  for (;;) {
    const end = text.indexOf('"', at)
    if (end < 0) return -1
    let escapes = 0
    while (text.charCodeAt(end - 1 - escapes) === BACKSLASH) escapes++
    if (escapes % 2 === 0) return end
    at = end + 1
  }
}

function keyText(text: string, [start, end]: [number, number]): string {
  const raw = text.slice(start, end)
  try {
    return JSON.parse(raw) as string
  } catch {
    return raw.slice(1, -1)
  }
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (UTF-16 code units). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** What is wrong with a text, or null: a NUL, or a surrogate without its pair. */
function textFault(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain NUL (\\u0000) characters'
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode text (it has a lone surrogate, \\ud800–\\udfff without its pair)'
  return null
}

/**
 * The first member of a parsed body that breaks a rule above (in document order), or null. The
 * body has passed structureFault, so the recursion is at most MAX_BODY_DEPTH deep.
 */
export function shapeFault(value: unknown, path: BodyPath = []): ShapeFault | null {
  if (typeof value === 'string') {
    const message = textFault(value)
    return message ? { path: [...path], message, kind: 'value_error' } : null
  }
  if (typeof value !== 'object' || value === null) return null
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i)
      const fault = shapeFault(value[i], path)
      path.pop()
      if (fault) return fault
    }
    return null
  }
  if (Object.hasOwn(value, '__proto__')) return { path: [...path, '__proto__'], message: 'is not a field (unknown fields are refused)', kind: 'extra_forbidden' }
  for (const key of Object.keys(value)) {
    path.push(key)
    const keyFault = textFault(key)
    const fault = keyFault ? { path: [...path], message: `(a member name) ${keyFault}`, kind: 'value_error' as const } : shapeFault((value as Record<string, unknown>)[key], path)
    path.pop()
    if (fault) return fault
  }
  return null
}
