// State charts: every machine of GET /console/machines, laid out by elkjs (in a worker, loaded
// with this page only) and drawn as SVG, states and transitions labelled; for a chosen actor
// (picked from the workspace's live calls, campaigns, customer workspaces; `call:<id>` follows the
// stream, other kinds are read every 2 s) its current state is marked as it moves. A list of the same states and transitions follows the drawing for screen readers.
import { api, ws } from './api.js'
import { callTitle, clear, h, notice, s } from './dom.js'
import { zoomable } from './zoom.js'

const BASE = new URL('.', import.meta.url).pathname
let elk = null

/** elkjs from our own routes, once: its API as a script, its layout in a Web Worker. */
function loadElk() {
  elk ??= new Promise((resolve, reject) => {
    if (window.ELK) return resolve(new window.ELK({ workerUrl: `${BASE}vendor/elk-worker.min.js` }))
    const script = h('script', { src: `${BASE}vendor/elk-api.js` })
    script.onload = () => resolve(new window.ELK({ workerUrl: `${BASE}vendor/elk-worker.min.js` }))
    script.onerror = () => reject(new Error('could not load the layout library'))
    document.head.append(script)
  })
  return elk
}

const measurer = document.createElement('canvas').getContext('2d')
const textWidth = (text, font) => {
  measurer.font = font
  return Math.ceil(measurer.measureText(text).width)
}
const STATE_FONT = '600 14px system-ui, sans-serif'
const EDGE_FONT = '12px system-ui, sans-serif'
const INITIAL = 'initial:'
/** An edge label's line height (px), for a 12 px font. */
const LABEL_LINE = 15
/** States are at least this wide (px): room on their sides for several transitions to meet them apart. */
const MIN_STATE_WIDTH = 120

/** The chart's transitions grouped by (source, target): `{ id, source, target, kind, labels, members }`. */
function transitions(graph) {
  const byPair = new Map()
  for (const e of graph.edges) {
    const key = `${e.source}\u0000${e.target}`
    const group = byPair.get(key)
    if (group) {
      group.labels.push(e.label)
      group.members.push(e.id)
      if (group.kind !== e.kind) group.kind = 'mixed'
    } else byPair.set(key, { id: e.id, source: e.source, target: e.target, kind: e.kind, labels: [e.label], members: [e.id] })
  }
  return [...byPair.values()]
}

/** The ELK graph of a chart: compound states hold their children; an initial dot per level. */
function elkGraph(graph) {
  const byParent = new Map()
  for (const n of graph.nodes) {
    const list = byParent.get(n.parent) ?? []
    list.push(n)
    byParent.set(n.parent, list)
  }
  // One line per pair of states: several transitions between the same two states share it, their
  // labels stacked in one box on it (parallel lines a few pixels apart read as one anyway).
  const edges = transitions(graph).map((e) => ({
    id: e.id,
    sources: [e.source],
    targets: [e.target],
    labels: [
      {
        text: e.labels.join('\n'),
        width: Math.max(...e.labels.map((l) => textWidth(l, EDGE_FONT))) + 10,
        height: LABEL_LINE * e.labels.length + 4,
        layoutOptions: { 'elk.edgeLabels.inline': 'true' },
      },
    ],
  }))
  const children = (parent) => {
    const list = byParent.get(parent) ?? []
    const nodes = list.map((n) => {
      const inner = byParent.has(n.id)
      return {
        id: n.id,
        labels: [{ text: n.label }],
        ...(inner
          ? { children: children(n.id), layoutOptions: { 'elk.padding': '[top=32,left=16,bottom=16,right=16]' } }
          : { width: Math.max(MIN_STATE_WIDTH, textWidth(n.label, STATE_FONT) + 32), height: 36 }),
      }
    })
    const first = list.find((n) => n.initial)
    if (first) {
      nodes.unshift({ id: `${INITIAL}${parent ?? 'root'}`, width: 14, height: 14 })
      edges.push({ id: `${INITIAL}${first.id}`, sources: [`${INITIAL}${parent ?? 'root'}`], targets: [first.id], labels: [] })
    }
    return nodes
  }
  return {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.layered.spacing.nodeNodeBetweenLayers': '48',
      'elk.spacing.nodeNode': '40',
      // Lines kept apart from each other and from states, so two never run on top of each other.
      'elk.spacing.edgeEdge': '18',
      'elk.layered.spacing.edgeEdgeBetweenLayers': '18',
      'elk.layered.spacing.edgeNodeBetweenLayers': '24',
      'elk.spacing.edgeNode': '20',
      'elk.spacing.portPort': '16',
      // Each label sits on its own line (the line runs through it): no label floats between two lines.
      'elk.edgeLabels.inline': 'true',
      'elk.spacing.edgeLabel': '2',
      'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
      'elk.layered.thoroughness': '40',
      // Every edge's points and labels in the drawing's own coordinates, wherever it was laid out.
      'elk.json.edgeCoords': 'ROOT',
      'elk.json.shapeCoords': 'PARENT',
    },
    children: children(null),
    edges,
  }
}

/** The laid-out graph as SVG: states (marked with data-state), edges with arrows and labels. */
function draw(laid, graph, name) {
  const info = new Map(graph.nodes.map((n) => [n.id, n]))
  const nodesLayer = s('g', { class: 'nodes' })
  const edgesLayer = s('g', { class: 'edges' })
  const place = (node, ox, oy) => {
    const x = ox + (node.x ?? 0)
    const y = oy + (node.y ?? 0)
    if (node.id.startsWith(INITIAL)) {
      nodesLayer.append(s('circle', { cx: x + node.width / 2, cy: y + node.height / 2, r: node.width / 2, class: 'initial' }))
    } else {
      const n = info.get(node.id)
      const compound = !!node.children?.length
      const g = s(
        'g',
        { class: `state${compound ? ' compound' : ''}${n?.type === 'final' ? ' final' : ''}`, dataset: { state: node.id } },
        s('title', {}, [n?.label, n?.description, n?.internal?.length ? `Handles without moving: ${n.internal.join(', ')}` : ''].filter(Boolean).join('\n')),
        s('rect', { x, y, width: node.width, height: node.height, rx: 10, ry: 10 }),
        s('text', { x: x + (compound ? 12 : node.width / 2), y: y + (compound ? 20 : node.height / 2 + 5), 'text-anchor': compound ? 'start' : 'middle' }, n?.label ?? node.id),
      )
      nodesLayer.append(g)
    }
    for (const child of node.children ?? []) place(child, x, y)
  }
  for (const child of laid.children ?? []) place(child, 0, 0)
  const groups = new Map(transitions(graph).map((e) => [e.id, e]))
  const labelsLayer = s('g', { class: 'edge-labels' })
  const walkEdges = (node) => {
    for (const edge of node.edges ?? []) {
      const group = groups.get(edge.id)
      const name = group ? `${info.get(group.source)?.label} → ${info.get(group.target)?.label}: ${group.labels.join(', ')}` : 'initial state'
      // A transition's line and its label highlight together (hover or focus): which label is whose is never a guess.
      const g = s('g', { class: `transition ${group?.kind ?? 'initial-edge'}`, dataset: { edge: edge.id } }, s('title', {}, name))
      for (const section of edge.sections ?? []) {
        const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint]
        const d = points.map((p, i) => `${i ? 'L' : 'M'}${p.x},${p.y}`).join(' ') // elk.json.edgeCoords ROOT
        g.append(s('path', { d, class: `edge ${group?.kind ?? 'initial-edge'}`, 'marker-end': 'url(#arrow)' }))
      }
      edgesLayer.append(g)
      for (const label of edge.labels ?? []) {
        const x = label.x ?? 0
        const y = label.y ?? 0
        const lines = label.text.split('\n')
        const box = s('g', { class: 'edge-label', dataset: { edge: edge.id } }, s('title', {}, name), s('rect', { x, y, width: label.width, height: label.height, rx: 3 }))
        box.append(...lines.map((line, i) => s('text', { x: x + 5, y: y + 13 + i * LABEL_LINE }, line)))
        box.addEventListener('mouseenter', () => g.classList.add('hot'))
        box.addEventListener('mouseleave', () => g.classList.remove('hot'))
        g.addEventListener('mouseenter', () => box.classList.add('hot'))
        g.addEventListener('mouseleave', () => box.classList.remove('hot'))
        labelsLayer.append(box)
      }
    }
    for (const child of node.children ?? []) walkEdges(child)
  }
  walkEdges(laid)
  const width = Math.ceil(laid.width ?? 400) + 8
  const height = Math.ceil(laid.height ?? 300) + 8
  return s(
    'svg',
    { class: 'chart', viewBox: `-4 -4 ${width} ${height}`, width, height, role: 'img', 'aria-labelledby': 'chart-title chart-desc' },
    s('title', { id: 'chart-title' }, `State chart of ${name}`),
    s('desc', { id: 'chart-desc' }, `${graph.nodes.length} states and ${graph.edges.length} transitions; the list after the drawing names them.`),
    s(
      'defs',
      {},
      s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' })),
    ),
    edgesLayer,
    nodesLayer,
    labelsLayer,
  )
}

/** Leaf and parent state ids of an actor's value (`'ringing'` or `{ sending: 'paced' }`) in chart `id`. */
function activeIds(chartId, value) {
  const out = []
  const walk = (prefix, v) => {
    if (typeof v === 'string') out.push(`${prefix}.${v}`)
    else if (v && typeof v === 'object')
      for (const [k, inner] of Object.entries(v)) {
        out.push(`${prefix}.${k}`)
        walk(`${prefix}.${k}`, inner)
      }
  }
  walk(chartId, value)
  return out
}

/** `{ id, label }` of the actors of machine `name` live in `workspace`, from the console's lists. */
async function liveActors(workspace, name) {
  if (name === 'call') {
    const { items } = await api('GET', ws(workspace, '/calls?live=true&limit=50'))
    return items.map((c) => ({ id: `call:${c.id}`, label: `${callTitle(c)} · ${c.status} · ${c.id}` }))
  }
  if (name === 'campaign') {
    const { items } = await api('GET', ws(workspace, '/campaigns?limit=50'))
    return items.map((c) => ({ id: `campaign:${c.id}`, label: `${c.name} · ${c.status}` }))
  }
  if (name === 'customerWorkspace') {
    const here = await api('GET', ws(workspace))
    const customers = here.kind === 'customer' ? [here] : (await api('GET', `/workspaces?parent=${encodeURIComponent(workspace)}&limit=100`)).items
    return customers.map((w) => ({ id: `customerWorkspace:${w.id}`, label: `${w.name} · ${w.status}` }))
  }
  return []
}

export function mount(root, { workspace, params, live, go }) {
  const machine = h('select', { id: 'machine' })
  const actor = h('select', { id: 'actor' })
  const form = h(
    'form',
    {
      class: 'filters',
      onsubmit: (e) => {
        e.preventDefault()
        go(workspace, 'charts', null, { machine: machine.value, ...(actor.value.trim() ? { actor: actor.value.trim() } : {}) })
      },
    },
    h('div', { class: 'field' }, h('label', { for: 'machine' }, 'Machine'), machine),
    h('div', { class: 'field' }, h('label', { for: 'actor' }, 'Follow'), actor),
    h('button', { type: 'submit' }, 'Show'),
  )
  const current = h('p', { class: 'current-state', role: 'status' })
  const figure = h('div', { class: 'chart-box', tabindex: '0', 'aria-label': 'State chart drawing: + and − zoom, arrow keys move, 0 fits' }, h('p', {}, 'Laying out…'))
  const zoomBar = h('div', { class: 'zoom-bar' })
  const listing = h('details', { class: 'chart-list' })
  root.append(h('h1', {}, 'State charts'), form, current, zoomBar, figure, listing)

  let chartId = null
  let timer = null
  const followed = params.get('actor')?.trim() || null

  const mark = (value) => {
    if (!chartId) return
    const ids = new Set(activeIds(chartId, value))
    for (const g of figure.querySelectorAll('g.state')) g.classList.toggle('current', ids.has(g.dataset.state))
    const name = typeof value === 'string' ? value : JSON.stringify(value)
    current.textContent = value === null ? '' : `${followed} is in state ${name}`
    current.dataset.state = typeof value === 'string' ? value : ''
  }

  const read = async () => {
    try {
      const description = await api('GET', `/actors/${encodeURIComponent(followed)}`)
      mark(description.value)
    } catch (err) {
      current.textContent = err.status === 404 ? `No actor ${followed}.` : `Could not read ${followed}: ${err.message}`
    }
  }

  const show = async (name) => {
    try {
      const [graph, layout] = await Promise.all([api('GET', `/app/charts/${encodeURIComponent(name)}`), loadElk()])
      const laid = await layout.layout(elkGraph(graph))
      chartId = graph.id
      const svg = draw(laid, graph, name)
      const [x0, y0, width, height] = svg.getAttribute('viewBox').split(' ').map(Number)
      clear(figure).append(svg)
      zoomBar.replaceChildren(zoomable(svg, figure, { x0, y0, width, height }))
      const names = new Map(graph.nodes.map((n) => [n.id, n.label]))
      listing.replaceChildren(
        h('summary', {}, `States and transitions of ${name} (version ${graph.version})`),
        h(
          'ul',
          {},
          graph.nodes.map((n) =>
            h(
              'li',
              {},
              h('strong', {}, n.label),
              n.description ? ` — ${n.description}` : '',
              h(
                'ul',
                {},
                graph.edges.filter((e) => e.source === n.id).map((e) => h('li', {}, `${e.label} → ${names.get(e.target) ?? e.target}`)),
              ),
            ),
          ),
        ),
      )
      if (followed) await read()
    } catch (err) {
      clear(figure).append(h('p', { class: 'error' }, `Could not draw ${name}: ${err.message}`))
    }
  }

  const offs = []
  if (followed?.startsWith('call:')) {
    offs.push(live.on('actor', ({ id, state }) => id === followed && mark(state)))
    offs.push(live.on('state', (state) => state === 'live' && chartId && read()))
  } else if (followed) timer = setInterval(read, 2000)

  // The actors of the chosen machine there are to follow in this workspace (none listed: the chart alone).
  let picking = 0
  const fillActors = async (name) => {
    const mine = ++picking
    actor.replaceChildren(h('option', { value: '' }, 'loading…'))
    let found = []
    try {
      found = await liveActors(workspace, name)
    } catch (err) {
      notice(`Could not list what to follow: ${err.message}`)
    }
    if (mine !== picking) return
    if (followed?.startsWith(`${name}:`) && !found.some((a) => a.id === followed)) found.unshift({ id: followed, label: `${followed.slice(name.length + 1)} (no longer live)` })
    actor.replaceChildren(h('option', { value: '' }, found.length ? 'nothing: the chart alone' : `no live ${name} in this workspace`), ...found.map((a) => h('option', { value: a.id }, a.label)))
    actor.value = followed && found.some((a) => a.id === followed) ? followed : ''
  }
  machine.addEventListener('change', () => void fillActors(machine.value))

  api('GET', '/machines')
    .then(({ items }) => {
      const wanted = params.get('machine') ?? (followed ? followed.split(':')[0] : null) ?? items[0]?.name
      machine.replaceChildren(...items.map((m) => h('option', { value: m.name }, `${m.name} (v${m.version})`)))
      machine.value = wanted
      void fillActors(machine.value)
      return show(machine.value)
    })
    .catch((err) => notice(`Could not list the machines: ${err.message}`))
  return () => {
    clearInterval(timer)
    for (const off of offs) off()
  }
}
