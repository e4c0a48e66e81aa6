// A column chart drawn as SVG with its axes: groups along x (turns, hours, days), a column per
// series in each, a y axis in the chart's unit with round ticks (latency.js `ticks`). A group with
// `href` is one link over its whole column (the calls behind it). The numbers go in a table beside it.
import { s } from './dom.js'
import { ticks } from './latency.js'

let drawn = 0

/**
 * groups: [{ label, title?, values: [number | null, one per series], href? }];
 * series: [{ label, cls }]; unit: ' ms', '' …
 */
export function columnChart({ title, desc, groups, series, unit = '', yTitle, xTitle }) {
  const n = ++drawn
  const max = Math.max(1, ...groups.flatMap((g) => g.values.filter((v) => typeof v === 'number')))
  const { step, top } = ticks(max)
  const left = 56
  const right = 12
  const plotTop = 22
  const plotH = 150
  const width = 560
  const plotW = width - left - right
  const height = plotTop + plotH + 44
  const slot = plotW / Math.max(1, groups.length)
  const colW = Math.max(2, Math.min(18, (slot * 0.8) / series.length))
  const y = (v) => plotTop + plotH - (Math.min(v, top) / top) * plotH
  const svg = s(
    'svg',
    { class: 'latency-chart column-chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': `cc${n}-title cc${n}-desc` },
    s('title', { id: `cc${n}-title` }, title),
    s('desc', { id: `cc${n}-desc` }, desc),
    s('text', { x: 0, y: 12, class: 'axis-title' }, yTitle),
    s('text', { x: left + plotW / 2, y: height - 4, class: 'axis-title', 'text-anchor': 'middle' }, xTitle),
  )
  for (let v = 0; v <= top; v += step) {
    svg.append(s('line', { x1: left, x2: left + plotW, y1: y(v), y2: y(v), class: v === 0 ? 'axis-line' : 'grid' }))
    svg.append(s('text', { x: left - 6, y: y(v) + 4, class: 'axis tick', 'text-anchor': 'end' }, String(v)))
  }
  svg.append(s('line', { x1: left, x2: left, y1: plotTop - 4, y2: plotTop + plotH, class: 'axis-line' }))
  // At most eight labels under the axis, so they never overlap.
  const every = Math.ceil(groups.length / 8)
  groups.forEach((g, i) => {
    const x0 = left + i * slot + (slot - colW * series.length) / 2
    const cols = g.values.map((v, k) =>
      typeof v === 'number'
        ? s(
            'rect',
            { x: x0 + k * colW, y: y(v), width: Math.max(1, colW - 1), height: plotTop + plotH - y(v), class: series[k].cls },
            s('title', {}, `${g.title ?? g.label}, ${series[k].label}: ${v}${unit}`),
          )
        : null,
    )
    if (g.href) {
      const hit = s('rect', { x: left + i * slot, y: plotTop, width: slot, height: plotH, class: 'hit' })
      svg.append(s('a', { href: g.href, class: 'bucket', 'aria-label': `${g.title ?? g.label}: its calls` }, hit, cols))
    } else svg.append(...cols.filter(Boolean))
    if (i % every === 0) svg.append(s('text', { x: left + i * slot + slot / 2, y: plotTop + plotH + 16, class: 'axis tick', 'text-anchor': 'middle' }, g.label))
  })
  return svg
}
