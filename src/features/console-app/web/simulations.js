// Simulations: the workspace's suites under their agent (scenarios, whether the suite gates
// publishing), each suite's latest runs (status, target, passed / failed calls, duration) linked to
// their results, and "Run against draft", which starts a run and opens it.
// Read again every 2 s while a run is queued or running.
import { api, ws } from './api.js'
import { badge, h, notice, when } from './dom.js'

const REFRESH_MS = 2000
const MOVING = new Set(['queued', 'running'])

export const target = (t) => (t === 'draft' ? 'draft' : `version ${t}`)
export const seconds = (ms) => (ms === null || ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`)
/** A run's outcome in words: passed / failed once done, else its status. */
export const outcome = (run) => (run.status === 'done' ? (run.passed ? 'passed' : 'failed') : run.status)

export function mount(root, { workspace, go, link }) {
  const list = h('div', { class: 'suites' }, h('p', { class: 'empty' }, 'Loading suites…'))
  root.append(
    h('h1', {}, 'Simulations'),
    h(
      'p',
      { class: 'hint' },
      'Scripted or persona callers against an agent (create scenarios and suites with the v1 API, /v1/simulations). A suite that gates publishing must pass against the draft before it is published.',
    ),
    list,
  )

  const start = async (suite, button) => {
    button.disabled = true
    try {
      const run = await api('POST', ws(workspace, `/simulations/suites/${encodeURIComponent(suite.id)}/runs`), { target: 'draft' })
      go(workspace, 'simulation', run.id)
    } catch (err) {
      notice(`Could not start a run of ${suite.name}: ${err.message}`)
      button.disabled = false
    }
  }

  const runRow = (r) =>
    h(
      'tr',
      { dataset: { runId: r.id, status: r.status } },
      h('td', {}, h('a', { href: link(workspace, 'simulation', r.id) }, when(r.createdAt))),
      h('td', {}, badge('sim', outcome(r))),
      h('td', {}, target(r.target)),
      h('td', { class: 'num' }, `${r.totals.passed} / ${r.totals.failed}`, r.totals.finished < r.totals.calls ? ` (of ${r.totals.calls})` : ''),
      h('td', { class: 'num' }, seconds(r.durationMs)),
    )

  const suiteCard = (suite, runs) =>
    h(
      'section',
      { class: 'suite', dataset: { suiteId: suite.id }, 'aria-label': `Suite ${suite.name}` },
      h('h3', {}, suite.name),
      h(
        'p',
        { class: 'suite-facts' },
        `${suite.scenarios.length} scenario${suite.scenarios.length === 1 ? '' : 's'} · `,
        suite.requiredToPublish ? h('strong', { class: 'gate' }, 'Gates publishing') : 'Does not gate publishing',
        ' ',
        h('button', { type: 'button', class: 'run-draft', onclick: (e) => start(suite, e.currentTarget) }, 'Run against draft'),
      ),
      runs.length
        ? h(
            'table',
            { class: 'list runs' },
            h('caption', { class: 'visually-hidden' }, `Latest runs of ${suite.name}`),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Started', 'Result', 'Target', 'Calls passed / failed', 'Duration'].map((c) => h('th', { scope: 'col' }, c)),
              ),
            ),
            h('tbody', {}, runs.map(runRow)),
          )
        : h('p', { class: 'empty' }, 'Never run.'),
    )

  let moving = false
  const load = async () => {
    try {
      const suites = (await api('GET', ws(workspace, '/simulations/suites'))).items
      const runs = await Promise.all(suites.map((s) => api('GET', ws(workspace, `/simulations/suites/${encodeURIComponent(s.id)}/runs?limit=10`)).then((p) => p.items)))
      moving = runs.some((rs) => rs.some((r) => MOVING.has(r.status)))
      if (!suites.length) return list.replaceChildren(h('p', { class: 'empty' }, 'No suite yet: POST /v1/simulations/scenarios, then POST /v1/simulations/suites.'))
      const byAgent = new Map()
      suites.forEach((s, i) => {
        if (!byAgent.has(s.agent)) byAgent.set(s.agent, { name: s.agentName, cards: [] })
        byAgent.get(s.agent).cards.push(suiteCard(s, runs[i]))
      })
      list.replaceChildren(...[...byAgent].map(([id, a]) => h('section', { class: 'agent-suites', dataset: { agentId: id } }, h('h2', {}, a.name ?? `${id} (deleted)`), a.cards)))
    } catch (err) {
      notice(`Could not load the simulations: ${err.message}`)
    }
  }
  void load()
  const timer = setInterval(() => {
    if (!document.hidden && moving) void load()
  }, REFRESH_MS)
  return () => clearInterval(timer)
}
