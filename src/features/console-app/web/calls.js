// Calls: the workspace's calls, newest first, filtered by status, direction, kind (real or
// simulated: a simulation run's calls are marked), number and dates;
// rows follow the stream (a status changing, a new call ringing).
import { api, ws } from './api.js'
import { badge, callSeconds, callTitle, duration, h, notice, when } from './dom.js'

const STATUSES = ['', 'ringing', 'connected', 'completed', 'missed', 'failed', 'cancelled', 'scheduled']

export function mount(root, { workspace, params, live, go, link }) {
  const field = (id, label, control) => h('div', { class: 'field' }, h('label', { for: id }, label), control)
  const status = h(
    'select',
    { id: 'f-status', name: 'status' },
    STATUSES.map((s) => h('option', { value: s }, s || 'any')),
  )
  const direction = h(
    'select',
    { id: 'f-direction', name: 'direction' },
    ['', 'outbound', 'inbound'].map((s) => h('option', { value: s }, s || 'any')),
  )
  const kind = h(
    'select',
    { id: 'f-simulated', name: 'simulated' },
    [
      ['', 'any'],
      ['false', 'real calls'],
      ['true', 'simulated calls'],
    ].map(([v, label]) => h('option', { value: v }, label)),
  )
  const phone = h('input', { id: 'f-phone', name: 'phone', type: 'tel', placeholder: '+14155550100', autocomplete: 'off' })
  const since = h('input', { id: 'f-since', name: 'since', type: 'date' })
  const until = h('input', { id: 'f-until', name: 'until', type: 'date' })
  for (const [el, key] of [
    [status, 'status'],
    [direction, 'direction'],
    [kind, 'simulated'],
    [phone, 'phone'],
    [since, 'since'],
    [until, 'until'],
  ])
    el.value = params.get(key) ?? ''
  const form = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Filter calls',
      onsubmit: (e) => {
        e.preventDefault()
        const chosen = Object.fromEntries(
          Object.entries({ status: status.value, direction: direction.value, simulated: kind.value, phone: phone.value.trim(), since: since.value, until: until.value }).filter(([, v]) => v),
        )
        go(workspace, 'calls', null, chosen)
      },
    },
    field('f-status', 'Status', status),
    field('f-direction', 'Direction', direction),
    field('f-simulated', 'Kind', kind),
    field('f-phone', 'Number', phone),
    field('f-since', 'From', since),
    field('f-until', 'Before', until),
    h('button', { type: 'submit' }, 'Filter'),
  )
  const body = h('tbody')
  const more = h('button', { type: 'button', class: 'quiet', hidden: true }, 'More calls')
  const table = h(
    'table',
    { class: 'list' },
    h('caption', { class: 'visually-hidden' }, 'Calls, newest first'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Started', 'Call', 'Agent', 'Status', 'Length', 'Summary'].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    body,
  )
  // An hour or a day opened from the Quality page names instants, which the date fields cannot show.
  const instants = ['since', 'until'].some((k) => params.get(k)?.includes('T'))
  const range = instants ? h('p', { class: 'range' }, `Created from ${when(params.get('since'))} to before ${when(params.get('until'))}`) : null
  root.append(h('h1', {}, 'Calls'), form, range ?? '', table, more)

  const rows = new Map()
  const row = (call) => {
    const tr = h(
      'tr',
      { dataset: { callId: call.id } },
      h('td', {}, when(call.startedAt ?? call.createdAt)),
      h(
        'td',
        {},
        h('a', { href: link(workspace, 'call', call.id) }, callTitle(call)),
        // A simulation's call is not a customer's: said in words, with the run that made it.
        call.simulation ? [' ', h('a', { class: 'badge simulated', href: link(workspace, 'simulation', call.simulation.runId), title: 'Made by a simulation run' }, 'simulated')] : null,
      ),
      h('td', {}, call.agent?.name ?? ''),
      h('td', {}, badge('status', call.status)),
      h('td', { class: 'length' }, duration(callSeconds(call, live.now()))),
      h('td', { class: 'summary' }, call.summary ?? ''),
    )
    tr.call = call
    rows.set(call.id, tr)
    return tr
  }
  const filters = Object.fromEntries([...params.entries()].filter(([k]) => ['status', 'direction', 'simulated', 'phone', 'since', 'until'].includes(k)))
  let cursor = null
  const load = async (append) => {
    const q = new URLSearchParams({ ...filters, limit: '25', ...(append && cursor ? { cursor } : {}) })
    try {
      const page = await api('GET', ws(workspace, `/calls?${q}`))
      if (!append) {
        body.replaceChildren()
        rows.clear()
      }
      body.append(...page.items.map(row))
      if (!page.items.length && !append) body.append(h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No call matches.')))
      cursor = page.nextCursor
      more.hidden = !cursor
    } catch (err) {
      notice(`Could not load calls: ${err.message}`)
    }
  }
  more.addEventListener('click', () => load(true))
  void load(false)
  const unfiltered = Object.keys(filters).length === 0
  const offs = [
    live.on('call', ({ call }) => {
      const existing = rows.get(call.id)
      if (existing) existing.replaceWith(row(call))
      else if (unfiltered) {
        body.querySelector('.empty')?.closest('tr')?.remove()
        body.prepend(row(call))
      }
    }),
  ]
  // A connected call's length counts up, once a second like a clock's seconds.
  const ticker = setInterval(() => {
    for (const tr of rows.values()) if (tr.call.status === 'connected') tr.querySelector('td.length').textContent = duration(callSeconds(tr.call, live.now()))
  }, 1000)
  return () => {
    clearInterval(ticker)
    for (const off of offs) off()
  }
}
