// Per-turn latency of a call's voice pipeline as a small SVG chart: one row per turn, its stages
// stacked (endpointing, speech to text, the model's first words, the voice's first sound), and a
// mark where the caller first heard the answer; the same numbers in a table beside it.
import { h, ms, s } from './dom.js'

export const STAGES = [
  { key: 'endpointingMs', label: 'Endpointing' },
  { key: 'sttMs', label: 'Speech to text' },
  { key: 'llmFirstTokenMs', label: 'Model, first words' },
  { key: 'ttsFirstByteMs', label: 'Voice, first sound' },
]

export function latencyChart(turns) {
  if (!turns.length) return h('p', { class: 'empty' }, 'No turn yet: the chart fills in as the caller speaks and the agent answers.')
  const total = (t) =>
    Math.max(
      t.toFirstHeardMs ?? 0,
      t.toFirstAudioMs ?? 0,
      STAGES.reduce((sum, st) => sum + (t[st.key] ?? 0), 0),
    )
  const longest = Math.max(1, ...turns.map(total))
  const rowH = 22
  const left = 60
  const width = 560
  const scale = (v) => (v / longest) * (width - left - 70)
  const height = turns.length * rowH + 30
  const svg = s(
    'svg',
    { class: 'latency-chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': 'latency-title latency-desc' },
    s('title', { id: 'latency-title' }, 'Latency per turn'),
    s('desc', { id: 'latency-desc' }, `${turns.length} turns; the longest took ${Math.round(longest)} ms from the end of the caller's speech to the answer heard. The table below has the numbers.`),
  )
  turns.forEach((t, i) => {
    const y = i * rowH + 4
    svg.append(s('text', { x: 0, y: y + 14, class: 'axis' }, `Turn ${i + 1}`))
    let x = left
    STAGES.forEach((st, n) => {
      const v = t[st.key]
      if (v === null || v === undefined) return
      const w = Math.max(1, scale(v))
      svg.append(s('rect', { x, y, width: w, height: rowH - 6, class: `stage stage-${n}` }, s('title', {}, `${st.label}: ${Math.round(v)} ms`)))
      x += w
    })
    if (t.toFirstHeardMs !== null && t.toFirstHeardMs !== undefined) {
      const hx = left + scale(t.toFirstHeardMs)
      svg.append(s('line', { x1: hx, x2: hx, y1: y - 2, y2: y + rowH - 4, class: 'heard' }, s('title', {}, `Heard after ${Math.round(t.toFirstHeardMs)} ms`)))
      svg.append(s('text', { x: hx + 4, y: y + 14, class: 'axis' }, `${Math.round(t.toFirstHeardMs)} ms`))
    }
  })
  const legend = h(
    'ul',
    { class: 'legend' },
    STAGES.map((st, n) => h('li', {}, h('span', { class: `swatch stage-${n}`, 'aria-hidden': 'true' }), st.label)),
    h('li', {}, h('span', { class: 'swatch heard', 'aria-hidden': 'true' }), 'First heard'),
  )
  const table = h(
    'table',
    { class: 'list compact' },
    h('caption', {}, 'Latency per turn (ms)'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Turn'),
        STAGES.map((st) => h('th', { scope: 'col' }, st.label)),
        h('th', { scope: 'col' }, 'First audio sent'),
        h('th', { scope: 'col' }, 'First heard'),
      ),
    ),
    h(
      'tbody',
      {},
      turns.map((t, i) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, String(i + 1)),
          STAGES.map((st) => h('td', {}, ms(t[st.key]))),
          h('td', {}, ms(t.toFirstAudioMs)),
          h('td', {}, ms(t.toFirstHeardMs)),
        ),
      ),
    ),
  )
  return h('div', { class: 'latency' }, svg, legend, h('details', {}, h('summary', {}, 'Numbers'), table))
}
