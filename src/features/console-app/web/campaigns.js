// Campaigns: each with its status and counts, read again every 1.5 s while the page is open, so a
// campaign's counts move as it sends.
import { api, ws } from './api.js'
import { badge, h, notice, when } from './dom.js'

const COUNTS = ['recipients', 'sent', 'delivered', 'read', 'replied', 'failed', 'skipped']
const REFRESH_MS = 1500

export function mount(root, { workspace }) {
  const body = h('tbody')
  const updated = h('p', { class: 'hint', role: 'status' })
  root.append(
    h('h1', {}, 'Campaigns'),
    updated,
    h(
      'table',
      { class: 'list' },
      h('caption', { class: 'visually-hidden' }, 'Campaigns, newest first'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Campaign'),
          h('th', { scope: 'col' }, 'Kind'),
          h('th', { scope: 'col' }, 'Status'),
          COUNTS.map((c) => h('th', { scope: 'col', class: 'num' }, c)),
          h('th', { scope: 'col' }, 'Started'),
        ),
      ),
      body,
    ),
  )
  let announced = false
  const load = async () => {
    try {
      const { items } = await api('GET', ws(workspace, '/campaigns?limit=50'))
      body.replaceChildren(
        ...items.map((c) =>
          h(
            'tr',
            { dataset: { campaignId: c.id } },
            h('th', { scope: 'row' }, c.name, h('span', { class: 'mono sub' }, c.id)),
            h('td', {}, c.kind),
            h('td', {}, badge('campaign', c.status)),
            COUNTS.map((k) => h('td', { class: 'num', dataset: { count: k } }, String(c.counts?.[k] ?? 0))),
            h('td', {}, when(c.startedAt)),
          ),
        ),
      )
      if (!items.length) body.append(h('tr', {}, h('td', { colspan: COUNTS.length + 4, class: 'empty' }, 'No campaign yet.')))
      // Said once: a status region repeating every 1.5 s would drown a screen reader.
      if (!announced) updated.textContent = 'Counts refresh every 1.5 seconds.'
      announced = true
    } catch (err) {
      notice(`Could not load campaigns: ${err.message}`)
    }
  }
  void load()
  const timer = setInterval(() => !document.hidden && load(), REFRESH_MS)
  return () => clearInterval(timer)
}
