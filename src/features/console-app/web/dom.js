// Small DOM helpers: elements from a tag, properties and children; times and durations in words.
const SVG_NS = 'http://www.w3.org/2000/svg'

function fill(el, props, children) {
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === undefined || v === null || v === false) continue
    if (k === 'class') el.setAttribute('class', v)
    else if (k === 'text') el.textContent = v
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v)
    else if (k === 'dataset') Object.assign(el.dataset, v)
    else if (k in el && typeof v !== 'string' && !(el instanceof SVGElement)) el[k] = v
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c))
  return el
}

/** An HTML element: h('button', { class: 'x', onclick }, 'End call'). */
export const h = (tag, props, ...children) => fill(document.createElement(tag), props, children)
/** An SVG element. */
export const s = (tag, props, ...children) => fill(document.createElementNS(SVG_NS, tag), props, children)

export const clear = (el) => {
  el.replaceChildren()
  return el
}

const pad = (n) => String(n).padStart(2, '0')
export const clock = (iso) => {
  if (!iso) return ''
  const d = new Date(iso)
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
}
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—')
export const duration = (seconds) => {
  const s = Math.max(0, Math.round(seconds ?? 0))
  return s >= 3600 ? `${Math.floor(s / 3600)}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}` : `${Math.floor(s / 60)}:${pad(s % 60)}`
}
export const ms = (v) => (v === null || v === undefined ? '—' : `${Math.round(v)} ms`)

/** A status in words and a class for its colour (never colour alone). */
export const badge = (kind, value) => h('span', { class: `badge ${kind} ${kind}-${value ?? 'none'}`, dataset: { value: value ?? '' } }, value ?? '—')

/** Says `text` to screen readers through the page's polite live region. */
export function announce(text) {
  const region = document.getElementById('announce')
  if (region) region.textContent = text
}

/** Shows an error (or a notice) at the top of the page. */
export function notice(text, kind = 'error') {
  const box = document.getElementById('notice')
  if (!box) return
  box.className = `notice ${kind}`
  box.textContent = text
  box.hidden = !text
  if (text && kind === 'error')
    setTimeout(() => {
      if (box.textContent === text) box.hidden = true
    }, 8000)
}

/**
 * The voice pipeline's turn-taking state (machines/voice-turn.ts) in an operator's words, and the
 * tone its pill takes: who has the floor right now.
 */
const TURNS = {
  opening: ['Agent greeting', 'agent'],
  listening: ['Waiting for caller', 'waiting'],
  callerSpeaking: ['Caller speaking', 'caller'],
  maybeDone: ['Caller paused', 'caller'],
  thinking: ['Agent thinking', 'waiting'],
  speaking: ['Agent speaking', 'agent'],
  interrupted: ['Caller interrupting', 'caller'],
  resuming: ['Agent resuming', 'agent'],
  ended: ['Line closed', 'none'],
}
export const turnWords = (state) => (state ? (TURNS[state]?.[0] ?? state) : 'No audio yet')
export const turnBadge = (state) =>
  h('span', { class: `badge turn turn-${state ? (TURNS[state]?.[1] ?? 'none') : 'none'}`, dataset: { value: state ?? '' }, title: state ? `voice pipeline: ${state}` : null }, turnWords(state))

export const callTitle = (c) => (c.surface === 'web' ? 'Browser call' : `${c.direction === 'inbound' ? 'From' : 'To'} ${c.phone ?? 'unknown'}`)
export const LIVE = new Set(['created', 'ringing', 'connected'])

/** A call's length in seconds: counted from the answer while it is connected (`now`: the service's time), else the stored length. */
export const callSeconds = (call, now) => (call.status === 'connected' && call.answeredAt ? Math.max(0, (now - Date.parse(call.answeredAt)) / 1000) : call.seconds)
