// Live: the workspace's calls in progress, each with its state, who has the floor (the voice
// pipeline's turn-taking in words), how long it has run, and its running transcript, as the stream
// reports them; a call that ends stays a moment under "Just ended". A call can be ended from here.
import { api, ws } from './api.js'
import { announce, badge, callTitle, clock, duration, h, LIVE, notice, turnBadge } from './dom.js'

const KEEP_ENDED = 8
/** The call timers tick once a second, like a clock's seconds. */
const TICK_MS = 1000
/** A transcript scrolled this close to its end still follows new lines (px: about a third of a line). */
const AT_END_PX = 8

/** What a call's timer reads: ringing for…, on the call for…, or the final length. */
function elapsed(call, now) {
  if (!LIVE.has(call.status)) return call.seconds ? duration(call.seconds) : ''
  const since = Date.parse(call.answeredAt ?? call.startedAt ?? call.createdAt ?? '')
  if (Number.isNaN(since)) return ''
  const text = duration((now - since) / 1000)
  return call.answeredAt ? text : `ringing ${text}`
}

export function mount(root, { workspace, live, link }) {
  const cards = new Map()
  const pipelines = new Map()
  const running = h('ul', { class: 'cards', 'aria-label': 'Calls in progress' })
  const ended = h('ul', { class: 'cards ended', 'aria-label': 'Calls that just ended' })
  const empty = h('p', { class: 'empty' }, 'No call in progress. Calls appear here as they ring.')
  root.append(
    h('h1', {}, 'Live calls'),
    h('section', { 'aria-labelledby': 'running-title' }, h('h2', { id: 'running-title' }, 'In progress'), empty, running),
    h('section', { 'aria-labelledby': 'ended-title' }, h('h2', { id: 'ended-title' }, 'Just ended'), ended),
  )

  const endCall = async (call, button) => {
    button.disabled = true
    try {
      await api('DELETE', ws(workspace, `/calls/${encodeURIComponent(call.id)}`))
      announce(`Ending the call ${callTitle(call)}`)
    } catch (err) {
      notice(`Could not end the call: ${err.message}`)
      button.disabled = false
    }
  }

  const card = (call) => {
    const el = h('li', { class: 'card call', dataset: { callId: call.id } })
    const status = h('span', { class: 'status-slot' })
    const pipeline = h('span', { class: 'pipeline-slot' })
    const timer = h('span', { class: 'timer', title: 'Time on the call (ringing, then since it was answered)' })
    const transcript = h('ol', { class: 'transcript', 'aria-label': 'Transcript', tabindex: '0' })
    const end = h('button', { type: 'button', class: 'danger end', onclick: () => endCall(el.call, end) }, 'End call')
    const title = h('h3', {}, h('a', { href: link(workspace, 'call', call.id) }, callTitle(call)))
    el.append(
      h('div', { class: 'card-head' }, title, h('span', { class: 'agent' }, call.agent?.name ?? '')),
      h('p', { class: 'states' }, status, h('span', { class: 'visually-hidden' }, 'Now: '), pipeline, timer),
      transcript,
      h('div', { class: 'actions' }, end),
    )
    el.parts = { status, pipeline, timer, transcript, end, title }
    return el
  }

  const paint = (el, call) => {
    const before = el.call?.status
    el.call = call
    el.parts.status.replaceChildren(badge('status', call.status))
    // The voice chart's state, and why it is there (the wait's rule, why the agent stopped or resumed).
    const voice = call.status === 'connected' ? (pipelines.get(call.id) ?? (call.media === 'live' ? { state: 'listening' } : null)) : null
    el.parts.pipeline.replaceChildren(...(voice || call.status === 'connected' ? [turnBadge(voice?.state ?? null)] : []), ...(voice?.why ? [' ', h('span', { class: 'why' }, voice.why)] : []))
    el.parts.timer.textContent = elapsed(call, serverNow())
    el.parts.end.hidden = !LIVE.has(call.status)
    const lines = call.transcript ?? []
    const list = el.parts.transcript
    // Follows the newest line unless the operator scrolled up to read an earlier one.
    const following = list.scrollTop + list.clientHeight >= list.scrollHeight - AT_END_PX
    // Lines are appended and the last one may grow: redraw from the first that differs.
    const shown = [...list.children]
    lines.forEach((line, i) => {
      const text = `${line.text}`
      const existing = shown[i]
      if (existing && existing.dataset.text === text && existing.dataset.speaker === line.speaker) return
      const li = h(
        'li',
        { class: `line ${line.speaker}`, dataset: { text, speaker: line.speaker } },
        h('span', { class: 'speaker' }, line.speaker === 'agent' ? 'Agent' : line.speaker === 'customer' ? 'Caller' : 'Team'),
        h('time', { datetime: line.at }, clock(line.at)),
        h('span', { class: 'text' }, text),
      )
      if (existing) existing.replaceWith(li)
      else list.append(li)
    })
    for (const extra of shown.slice(lines.length)) extra.remove()
    if (following) list.scrollTop = list.scrollHeight
    if (before && before !== call.status) announce(`${callTitle(call)}: ${call.status}`)
  }

  const show = (call) => {
    let el = cards.get(call.id)
    if (!el) {
      if (!LIVE.has(call.status)) return // an old call's analysis, not one we watched
      el = card(call)
      cards.set(call.id, el)
      running.prepend(el)
    }
    paint(el, call)
    if (!LIVE.has(call.status) && el.parentElement === running) {
      ended.prepend(el)
      while (ended.children.length > KEEP_ENDED) {
        const last = ended.lastElementChild
        cards.delete(last.dataset.callId)
        last.remove()
      }
    }
    empty.hidden = running.children.length > 0
  }

  // The timers run on the service's clock (live.now(): the stream's first word gives it).
  const serverNow = () => live.now()
  const ticker = setInterval(() => {
    const now = serverNow()
    for (const el of running.children) if (el.call) el.parts.timer.textContent = elapsed(el.call, now)
  }, TICK_MS)

  const offs = [
    // `__consoleSeen`: a probe the benchmark installs (bench/console-app.ts), told once the page shows a change.
    live.on('call', ({ call, at }) => {
      show(call)
      window.__consoleSeen?.('call', at)
    }),
    live.on('pipeline', ({ callId, state, why, at }) => {
      pipelines.set(callId, { state, why })
      const el = cards.get(callId)
      if (el?.call) paint(el, el.call)
      window.__consoleSeen?.('pipeline', at)
    }),
  ]
  // Loaded after the stream is open; again whenever it comes back (what it missed meanwhile).
  const load = () =>
    api('GET', ws(workspace, '/calls?live=true&limit=100'))
      .then(({ items }) => items.reverse().forEach(show))
      .catch((err) => notice(`Could not load live calls: ${err.message}`))
      .finally(() => (empty.hidden = running.children.length > 0))
  let first = true
  offs.push(live.on('state', (state) => state === 'live' && !first && load()))
  first = false
  void load()
  return () => {
    clearInterval(ticker)
    for (const off of offs) off()
  }
}
