// Quality: the workspace's calls at a glance over the last 24 hours (hourly) or 7 days (daily) —
// answer time p50/p95, interruptions and suspected cut-offs per call, transfers and how they ended,
// calls refused at capacity — each hour or day a link to the calls behind it (the Calls list,
// filtered to its instants); a refused call has a record only when it waited and gave up, so the
// refusals' table links those calls and counts the others.
import { api, ws } from './api.js'
import { columnChart } from './columns.js'
import { h, ms, notice } from './dom.js'

const WINDOWS = [
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
]
const OUTCOMES = [
  ['answered', 'answered'],
  ['no_answer', 'not answered'],
  ['busy', 'busy'],
  ['declined', 'declined'],
  ['failed', 'failed'],
  ['pending', 'not over yet'],
]

const refusedWords = (r) =>
  r.total
    ? `${r.total}: ${[
        [r.outbound, 'placed'],
        [r.inbound, 'rang in (busy)'],
        [r.web, 'from a browser'],
      ]
        .filter(([n]) => n)
        .map(([n, w]) => `${n} ${w}`)
        .join(', ')}`
    : 'none'
const perCall = (v) => (v === null ? '—' : String(v))
const labelOf = (b, grain) =>
  grain === 'hour'
    ? new Date(b.since).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
    : new Date(b.since).toLocaleDateString([], { month: 'short', day: 'numeric', timeZone: 'UTC' })

export function mount(root, { workspace, params, go, link }) {
  const window = params.get('window') === '7d' ? '7d' : '24h'
  const toggle = h(
    'fieldset',
    { class: 'window-toggle' },
    h('legend', {}, 'Period'),
    WINDOWS.map(([value, label]) =>
      h('label', {}, h('input', { type: 'radio', name: 'window', value, checked: value === window, onchange: () => go(workspace, 'quality', null, { window: value }) }), ` ${label}`),
    ),
  )
  const body = h('div', { 'aria-live': 'polite' }, h('p', { class: 'empty' }, 'Loading…'))
  root.append(h('h1', {}, 'Quality'), toggle, body)
  const callsOf = (since, until) => link(workspace, 'calls', null, { simulated: 'false', since, until })

  api('GET', ws(workspace, `/quality?window=${window}`))
    .then((q) => {
      const o = q.overall
      const span = window === '24h' ? 'hour' : 'day (UTC)'
      const groups = (values) =>
        q.buckets.map((b) => ({
          label: labelOf(b, q.grain),
          title: `${labelOf(b, q.grain)} (${b.calls} calls)`,
          values: values(b),
          href: b.calls || b.transfers.total ? callsOf(b.since, b.until) : null,
        }))
      const fact = (label, value, key) => [h('dt', {}, label), h('dd', { dataset: { fact: key } }, value)]
      const facts = h(
        'dl',
        { class: 'facts quality-facts' },
        fact('Calls', h('a', { href: callsOf(q.since, q.until) }, `${o.calls} ${o.calls === 1 ? 'call' : 'calls'}`), 'calls'),
        fact('Answer time', o.answerMs ? `p50 ${ms(o.answerMs.p50)} · p95 ${ms(o.answerMs.p95)} (${o.turns} turns)` : '—', 'answer'),
        fact('Interruptions per call', `${perCall(o.interruptionsPerCall)} (${o.interruptions} in all)`, 'interruptions'),
        fact('Suspected cut-offs per call', `${perCall(o.cutOffsPerCall)} (${o.cutOffs} pauses the agent talked into)`, 'cutoffs'),
        fact(
          'Transfers',
          o.transfers.total
            ? `${o.transfers.total}: ${OUTCOMES.filter(([k]) => o.transfers[k])
                .map(([k, w]) => `${o.transfers[k]} ${w}`)
                .join(', ')}`
            : 'none',
          'transfers',
        ),
        fact('Refused at capacity', refusedWords(o.refused), 'refused'),
      )
      const answerChart = columnChart({
        title: `Answer time per ${span}, p50 and p95`,
        desc: `From the end of the caller's speech to the answer heard, per ${span}; over the period p50 ${ms(o.answerMs?.p50)}, p95 ${ms(o.answerMs?.p95)}. The table below has the numbers; each ${span} links to its calls.`,
        groups: groups((b) => [b.answerMs?.p50 ?? null, b.answerMs?.p95 ?? null]),
        series: [
          { label: 'p50', cls: 'stage-1' },
          { label: 'p95', cls: 'stage-3' },
        ],
        unit: ' ms',
        yTitle: 'ms after the caller stopped speaking',
        xTitle: q.grain === 'hour' ? 'Hour' : 'Day (UTC)',
      })
      const eventsChart = columnChart({
        title: `Interruptions and suspected cut-offs per call, per ${span}`,
        desc: `Over the period ${perCall(o.interruptionsPerCall)} interruptions and ${perCall(o.cutOffsPerCall)} suspected cut-offs per call. The table below has the numbers.`,
        groups: groups((b) => [b.interruptionsPerCall, b.cutOffsPerCall]),
        series: [
          { label: 'interruptions per call', cls: 'stage-0' },
          { label: 'suspected cut-offs per call', cls: 'stage-2' },
        ],
        yTitle: 'per call',
        xTitle: q.grain === 'hour' ? 'Hour' : 'Day (UTC)',
      })
      const legend = (items) =>
        h(
          'ul',
          { class: 'legend' },
          items.map(([cls, label]) => h('li', {}, h('span', { class: `swatch ${cls}`, 'aria-hidden': 'true' }), label)),
        )
      const refusedChart = columnChart({
        title: `Calls refused at capacity, per ${span}`,
        desc: `Calls no instance had room for, per ${span}; over the period ${o.refused.total}. The table below has the numbers and the refused calls that have a record.`,
        groups: q.buckets.map((b) => ({ label: labelOf(b, q.grain), title: labelOf(b, q.grain), values: [b.refused.total] })),
        series: [{ label: 'refused', cls: 'stage-3' }],
        unit: ' calls',
        yTitle: 'calls refused',
        xTitle: q.grain === 'hour' ? 'Hour' : 'Day (UTC)',
      })
      const refusedRows = q.buckets.filter((b) => b.refused.total)
      const refusedTable = h(
        'table',
        { class: 'list compact refused-table' },
        h('caption', {}, `Refused per ${span}, those with refusals`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['When', 'Refused', 'Placed', 'Rang in (busy)', 'From a browser', 'Calls with a record'].map((c) => h('th', { scope: 'col' }, c)),
          ),
        ),
        h(
          'tbody',
          {},
          refusedRows.length
            ? refusedRows.map((b) =>
                h(
                  'tr',
                  {},
                  h('th', { scope: 'row' }, labelOf(b, q.grain)),
                  [b.refused.total, b.refused.outbound, b.refused.inbound, b.refused.web].map((n) => h('td', {}, String(n))),
                  h(
                    'td',
                    { class: 'refused-calls' },
                    b.refused.calls.length ? b.refused.calls.flatMap((id, i) => [i ? ', ' : '', h('a', { href: link(workspace, 'call', id) }, id)]) : 'none (not placed)',
                  ),
                ),
              )
            : h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No call refused in this period.')),
        ),
      )
      const rows = q.buckets.filter((b) => b.calls || b.transfers.total)
      const table = h(
        'table',
        { class: 'list compact quality-table' },
        h('caption', {}, `Per ${span}, those with calls`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['When', 'Calls', 'Answer p50', 'Answer p95', 'Interruptions / call', 'Cut-offs / call', 'Transfers'].map((c) => h('th', { scope: 'col' }, c)),
          ),
        ),
        h(
          'tbody',
          {},
          rows.length
            ? rows.map((b) =>
                h(
                  'tr',
                  {},
                  h('th', { scope: 'row' }, h('a', { href: callsOf(b.since, b.until) }, labelOf(b, q.grain))),
                  h('td', {}, String(b.calls)),
                  h('td', {}, ms(b.answerMs?.p50)),
                  h('td', {}, ms(b.answerMs?.p95)),
                  h('td', {}, perCall(b.interruptionsPerCall)),
                  h('td', {}, perCall(b.cutOffsPerCall)),
                  h('td', {}, b.transfers.total ? `${b.transfers.total} (${b.transfers.answered} answered)` : '—'),
                ),
              )
            : h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No call in this period.')),
        ),
      )
      body.replaceChildren(
        facts,
        q.truncated ? h('p', { class: 'empty' }, 'More calls than are read at once: the figures cover the newest.') : '',
        h(
          'section',
          { class: 'panel', 'aria-labelledby': 'q-answer' },
          h('h2', { id: 'q-answer' }, 'Answer time'),
          answerChart,
          legend([
            ['stage-1', 'p50'],
            ['stage-3', 'p95'],
          ]),
        ),
        h(
          'section',
          { class: 'panel', 'aria-labelledby': 'q-events' },
          h('h2', { id: 'q-events' }, 'Interruptions and suspected cut-offs'),
          eventsChart,
          legend([
            ['stage-0', 'Interruptions taken, per call'],
            ['stage-2', 'Suspected cut-offs (pauses the agent talked into), per call'],
          ]),
        ),
        table,
        h(
          'section',
          { class: 'panel', 'aria-labelledby': 'q-refused' },
          h('h2', { id: 'q-refused' }, 'Calls refused at capacity'),
          h(
            'p',
            { class: 'hint' },
            'Counted on every instance; a refused call has a record only when it waited for room and gave up (its link below). An instance that crashed may miss its last 10 seconds.',
          ),
          refusedChart,
          refusedTable,
        ),
      )
    })
    .catch((err) => notice(`Could not load quality: ${err.message}`))
}
