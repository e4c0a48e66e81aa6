// Agents: every agent of the workspace with what an operator scans for — the version it serves
// (or that nothing is published), the numbers that reach it, its calls today and its last change.
// A name opens the agent's page (agent.js).
import { api, ws } from './api.js'
import { h, notice, when } from './dom.js'

/** What an agent serves, in words: `v3`, `v3 · unpublished changes`, or `Not published`. */
export const served = (a) => (a.publishedVersion === null ? 'Not published' : `v${a.publishedVersion}${a.hasUnpublishedChanges ? ' · unpublished changes' : ''}`)

export function mount(root, { workspace, link }) {
  const body = h('tbody')
  const empty = h('p', { class: 'empty', hidden: true }, 'No agent yet: create one with POST /api/v1/agents.')
  root.append(
    h('h1', {}, 'Agents'),
    empty,
    h(
      'table',
      { class: 'list agents' },
      h('caption', { class: 'visually-hidden' }, 'Agents, newest first'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Agent', 'Published', 'Numbers', 'Calls today', 'Last change'].map((c, i) => h('th', { scope: 'col', class: i === 3 ? 'num' : null }, c)),
        ),
      ),
      body,
    ),
  )
  api('GET', ws(workspace, '/agents'))
    .then(({ items }) => {
      empty.hidden = items.length > 0
      body.replaceChildren(
        ...items.map((a) =>
          h(
            'tr',
            { dataset: { agentId: a.id } },
            h('th', { scope: 'row' }, h('a', { href: link(workspace, 'agent', a.id) }, a.name), h('span', { class: 'mono sub' }, a.id)),
            h('td', { dataset: { col: 'published' } }, served(a)),
            h('td', { class: 'mono', dataset: { col: 'numbers' } }, a.numbers.length ? a.numbers.join(', ') : '—'),
            h('td', { class: 'num', dataset: { col: 'calls' } }, `${a.callsToday}${a.callsTodayCapped ? '+' : ''}`),
            h('td', {}, when(a.updatedAt)),
          ),
        ),
      )
    })
    .catch((err) => notice(`Could not load the agents: ${err.message}`))
}
