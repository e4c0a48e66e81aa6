// Zoom and pan for a drawing in a box: the SVG fills the box and its viewBox is the part of the
// drawing in view. It opens fitted (the whole drawing, centred); the wheel zooms about the pointer,
// a drag pans, and buttons and keys do both (+ / − / 0 fits / arrows pan) for keyboard users.
import { h } from './dom.js'

/** Zoom bounds against the fitted view: 8× closer at most, and 2× further (the drawing then sits small in the box). */
const MAX_ZOOM = 8
const MIN_ZOOM = 0.5
const STEP = 1.25
/** An arrow key moves the view a tenth of its width or height. */
const PAN_STEP = 0.1

/**
 * Makes `svg` (drawn `width` × `height` in its own units, from `x0`, `y0`) zoomable inside `box`.
 * Returns the controls to place before the box; `box` must have a height of its own.
 */
export function zoomable(svg, box, { x0 = 0, y0 = 0, width, height }) {
  const full = { x: x0, y: y0, w: width, h: height }
  let view = { ...full }
  svg.setAttribute('width', '100%')
  svg.setAttribute('height', '100%')
  svg.setAttribute('preserveAspectRatio', 'xMidYMid meet')
  const status = h('span', { class: 'zoom-level', role: 'status' })
  const apply = () => {
    svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`)
    const zoom = full.w / view.w
    status.textContent = `${Math.round(zoom * 100)} % of the fitted size`
    box.dataset.zoom = zoom.toFixed(3)
  }
  /** The drawing's units per screen pixel (meet: the larger ratio decides). */
  const unitsPerPx = () => {
    const r = box.getBoundingClientRect()
    return Math.max(view.w / Math.max(r.width, 1), view.h / Math.max(r.height, 1))
  }
  /** Zooms by `factor` keeping the drawing point under (fx, fy) — fractions of the view — where it is. */
  const zoomBy = (factor, fx = 0.5, fy = 0.5) => {
    const zoom = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, (full.w / view.w) * factor))
    const w = full.w / zoom
    const hh = full.h / zoom
    view = { x: view.x + (view.w - w) * fx, y: view.y + (view.h - hh) * fy, w, h: hh }
    apply()
  }
  const pan = (dx, dy) => {
    view = { ...view, x: view.x + dx, y: view.y + dy }
    apply()
  }
  const fit = () => {
    view = { ...full }
    apply()
  }
  /** Where a client point falls in the view, as fractions, allowing for the letterbox `meet` leaves. */
  const fraction = (clientX, clientY) => {
    const r = box.getBoundingClientRect()
    const k = unitsPerPx()
    const shownW = view.w / k
    const shownH = view.h / k
    const left = r.left + (r.width - shownW) / 2
    const top = r.top + (r.height - shownH) / 2
    return [Math.min(1, Math.max(0, (clientX - left) / shownW)), Math.min(1, Math.max(0, (clientY - top) / shownH))]
  }

  box.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault()
      const [fx, fy] = fraction(e.clientX, e.clientY)
      zoomBy(e.deltaY < 0 ? STEP : 1 / STEP, fx, fy)
    },
    { passive: false },
  )
  let drag = null
  box.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return
    drag = { x: e.clientX, y: e.clientY, view: { ...view }, k: unitsPerPx() }
    box.setPointerCapture(e.pointerId)
    box.classList.add('panning')
  })
  box.addEventListener('pointermove', (e) => {
    if (!drag) return
    view = { ...drag.view, x: drag.view.x - (e.clientX - drag.x) * drag.k, y: drag.view.y - (e.clientY - drag.y) * drag.k }
    apply()
  })
  const stop = () => {
    drag = null
    box.classList.remove('panning')
  }
  box.addEventListener('pointerup', stop)
  box.addEventListener('pointercancel', stop)
  box.addEventListener('keydown', (e) => {
    const moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }
    if (e.key === '+' || e.key === '=') zoomBy(STEP)
    else if (e.key === '-') zoomBy(1 / STEP)
    else if (e.key === '0') fit()
    else if (moves[e.key]) pan(moves[e.key][0] * view.w * PAN_STEP, moves[e.key][1] * view.h * PAN_STEP)
    else return
    e.preventDefault()
  })
  fit()
  return h(
    'div',
    { class: 'zoom-controls', role: 'group', 'aria-label': 'Zoom the drawing' },
    h('button', { type: 'button', class: 'quiet', 'aria-label': 'Zoom in', onclick: () => zoomBy(STEP) }, '+'),
    h('button', { type: 'button', class: 'quiet', 'aria-label': 'Zoom out', onclick: () => zoomBy(1 / STEP) }, '−'),
    h('button', { type: 'button', class: 'quiet zoom-fit', onclick: fit }, 'Fit'),
    status,
    h('span', { class: 'hint' }, 'Wheel or + / − to zoom, drag or arrow keys to move, 0 to fit.'),
  )
}
