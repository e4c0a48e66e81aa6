// A call's turn events: the answer time of each turn (when the caller first heard the answer, after
// they stopped speaking) as a column chart with its axes, and how the caller's speech over the agent
// ended — interruptions taken, backchannels resumed, talked over — and the pauses the agent talked into.

import { columnChart } from './columns.js'
import { h, ms } from './dom.js'

const answerOf = (t) => t.toFirstHeardMs ?? t.toFirstAudioMs ?? null

const EVENTS = [
  ['taken', 'Interruptions taken', 'the caller spoke over the agent, which stopped and answered'],
  ['resumed', 'Backchannels resumed', 'the agent stopped for a "mhm" or a cough, then went on with its sentence'],
  ['talkedInto', 'Pauses talked into', 'the caller went on within 1 s of the answer: the agent took a pause for the end of their turn'],
  ['talkedOver', 'Talked over', 'speech over the agent that did not stop it (its echo, a click, a missed interruption)'],
]

export function turnEvents(call) {
  const turns = call.latencyTurns ?? []
  const overlaps = call.latency?.overlaps ?? null
  const facts = h(
    'dl',
    { class: 'facts turn-events' },
    EVENTS.flatMap(([key, label, why]) => [h('dt', { title: why }, label), h('dd', { dataset: { event: key } }, overlaps ? String(overlaps[key] ?? 0) : '—')]),
  )
  if (!turns.length) return h('div', { class: 'turn-events' }, h('p', { class: 'empty' }, 'No answer yet.'), facts)
  const answers = turns.map(answerOf)
  const known = answers.filter((v) => v !== null)
  const chart = columnChart({
    title: 'Answer time per turn',
    desc: `${turns.length} turns; answers heard after ${known.length ? `${Math.min(...known)} to ${Math.max(...known)}` : 'no'} ms. The table below has the numbers.`,
    groups: answers.map((v, i) => ({ label: String(i + 1), title: `Turn ${i + 1}`, values: [v] })),
    series: [{ label: 'answer heard', cls: 'stage-1' }],
    unit: ' ms',
    yTitle: 'ms after the caller stopped speaking',
    xTitle: 'Turn',
  })
  const table = h(
    'table',
    { class: 'list compact' },
    h('caption', {}, 'Answer time per turn'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Turn'), h('th', { scope: 'col' }, 'Answer heard after'))),
    h(
      'tbody',
      {},
      answers.map((v, i) => h('tr', {}, h('th', { scope: 'row' }, String(i + 1)), h('td', {}, ms(v)))),
    ),
  )
  return h('div', { class: 'turn-events' }, chart, facts, h('details', {}, h('summary', {}, 'Numbers'), table))
}
