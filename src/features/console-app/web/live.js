// Live: the workspace's calls in progress, each with its state, the voice pipeline's state and
// its running transcript, as the stream reports them; a call that ends stays a moment under
// "Just ended". A call can be ended from here.
import { api, ws } from './api.js'
import { announce, badge, callTitle, clock, h, LIVE, notice } from './dom.js'

const KEEP_ENDED = 8

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
    const transcript = h('ol', { class: 'transcript', 'aria-label': 'Transcript' })
    const end = h('button', { type: 'button', class: 'danger end', onclick: () => endCall(el.call, end) }, 'End call')
    const title = h('h3', {}, h('a', { href: link(workspace, 'call', call.id) }, callTitle(call)))
    el.append(
      h('div', { class: 'card-head' }, title, h('span', { class: 'agent' }, call.agent?.name ?? '')),
      h('p', { class: 'states' }, h('span', { class: 'label' }, 'Call'), status, ' ', h('span', { class: 'label' }, 'Voice'), pipeline),
      transcript,
      h('div', { class: 'actions' }, end),
    )
    el.parts = { status, pipeline, transcript, end, title }
    return el
  }

  const paint = (el, call) => {
    const before = el.call?.status
    el.call = call
    el.parts.status.replaceChildren(badge('status', call.status))
    el.parts.pipeline.replaceChildren(badge('pipeline', LIVE.has(call.status) ? (pipelines.get(call.id) ?? (call.media === 'live' ? 'listening' : null)) : null))
    el.parts.end.hidden = !LIVE.has(call.status)
    const lines = call.transcript ?? []
    const list = el.parts.transcript
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
    list.scrollTop = list.scrollHeight
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

  const offs = [
    // `__consoleSeen`: a probe the benchmark installs (bench/console-app.ts), told once the page shows a change.
    live.on('call', ({ call, at }) => {
      show(call)
      window.__consoleSeen?.('call', at)
    }),
    live.on('pipeline', ({ callId, state, at }) => {
      pipelines.set(callId, state)
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
    for (const off of offs) off()
  }
}
