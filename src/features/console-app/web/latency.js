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

/** A round axis for values up to `max` ms: a step of 1, 2 or 5 × 10^n giving 4 to 8 ticks, and the last tick. */
export function ticks(max) {
  const rough = Math.max(1, max / 5)
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 5, 10].map((m) => m * power).find((c) => c >= rough) ?? 10 * power
  return { step, top: Math.ceil(max / step) * step }
}

export function latencyChart(turns) {
  if (!turns.length) return h('p', { class: 'empty' }, 'No turn yet: the chart fills in as the caller speaks and the agent answers.')
  const total = (t) =>
    Math.max(
      t.toFirstHeardMs ?? 0,
      t.toFirstAudioMs ?? 0,
      STAGES.reduce((sum, st) => sum + (t[st.key] ?? 0), 0),
    )
  const { step, top } = ticks(Math.max(1, ...turns.map(total)))
  const rowH = 22
  const left = 64
  const right = 24
  const width = 560
  const plotTop = 20
  const plotW = width - left - right
  const scale = (v) => (Math.min(v, top) / top) * plotW
  const plotH = turns.length * rowH
  const height = plotTop + plotH + 44
  const svg = s(
    'svg',
    { class: 'latency-chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': 'latency-title latency-desc' },
    s('title', { id: 'latency-title' }, 'Latency per turn'),
    s(
      'desc',
      { id: 'latency-desc' },
      `${turns.length} turns; the longest took ${Math.round(Math.max(...turns.map(total)))} ms from the end of the caller's speech to the answer heard. The table below has the numbers.`,
    ),
    // The y axis: one row per turn, named at the left.
    s('text', { x: 0, y: 12, class: 'axis-title' }, 'Turn'),
  )
  // The x axis: milliseconds since the caller stopped speaking, a grid line at each tick.
  const axisY = plotTop + plotH + 4
  for (let v = 0; v <= top; v += step) {
    const x = left + scale(v)
    svg.append(s('line', { x1: x, x2: x, y1: plotTop - 4, y2: axisY, class: v === 0 ? 'axis-line' : 'grid' }))
    svg.append(s('text', { x, y: axisY + 14, class: 'axis tick', 'text-anchor': 'middle' }, String(v)))
  }
  svg.append(s('line', { x1: left, x2: left + plotW, y1: axisY, y2: axisY, class: 'axis-line' }))
  svg.append(s('text', { x: left + plotW / 2, y: height - 4, class: 'axis-title', 'text-anchor': 'middle' }, 'ms after the caller stopped speaking'))
  turns.forEach((t, i) => {
    const y = plotTop + i * rowH + 3
    svg.append(s('text', { x: left - 8, y: y + 13, class: 'axis', 'text-anchor': 'end' }, `${i + 1}`))
    let x = left
    STAGES.forEach((st, n) => {
      const v = t[st.key]
      if (v === null || v === undefined) return
      const w = Math.max(1, scale(v))
      svg.append(s('rect', { x, y, width: w, height: rowH - 6, class: `stage stage-${n}` }, s('title', {}, `Turn ${i + 1}, ${st.label}: ${Math.round(v)} ms`)))
      x += w
    })
    if (t.toFirstHeardMs !== null && t.toFirstHeardMs !== undefined) {
      const hx = left + scale(t.toFirstHeardMs)
      svg.append(s('line', { x1: hx, x2: hx, y1: y - 2, y2: y + rowH - 4, class: 'heard' }, s('title', {}, `Turn ${i + 1}: heard after ${Math.round(t.toFirstHeardMs)} ms`)))
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
