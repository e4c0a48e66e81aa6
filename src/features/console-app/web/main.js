// The app's frame: sign-in, the workspace picker, the stream's state, and a hash router
// (#/<workspace>/<page>/<id>) that mounts one page module at a time, loaded when first opened.
import { api, live, session } from './api.js'
import { clear, h, notice } from './dom.js'

const PAGES = {
  live: () => import('./live.js'),
  calls: () => import('./calls.js'),
  agents: () => import('./agents.js'),
  agent: () => import('./agent.js'),
  call: () => import('./call.js'),
  charts: () => import('./charts.js'),
  inbox: () => import('./inbox.js'),
  campaigns: () => import('./campaigns.js'),
  campaign: () => import('./campaign.js'),
  simulations: () => import('./simulations.js'),
  simulation: () => import('./simulation.js'),
  quality: () => import('./quality.js'),
}
const TITLES = {
  live: 'Live',
  calls: 'Calls',
  agents: 'Agents',
  agent: 'Agent',
  call: 'Call',
  charts: 'State charts',
  inbox: 'Inbox',
  campaigns: 'Campaigns',
  campaign: 'Campaign',
  simulations: 'Simulations',
  simulation: 'Simulation run',
  quality: 'Quality',
}
const WS_KEY = 'console-workspace'
/** A page opened from a list lights that list's link in the nav, and the workspace picker goes back to it. */
const SECTION = { agent: 'agents', call: 'calls', campaign: 'campaigns', simulation: 'simulations' }

const $ = (id) => document.getElementById(id)
let unmount = null
let workspaces = []

function route() {
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?')
  const parts = path.split('/').map(decodeURIComponent)
  // A page alone (the nav's links before a workspace is known, #/live): that page in the current workspace.
  if (parts.length === 1 && Object.hasOwn(PAGES, parts[0])) parts.unshift('')
  const [workspace, page, ...rest] = parts
  return { workspace: workspace || null, page: PAGES[page] ? page : 'live', id: rest.join('/') || null, params: new URLSearchParams(query ?? '') }
}

export const go = (workspace, page, id, params) => {
  location.hash = `#/${encodeURIComponent(workspace)}/${page}${id ? `/${encodeURIComponent(id)}` : ''}${params ? `?${new URLSearchParams(params)}` : ''}`
}
export const link = (workspace, page, id, params) => `#/${encodeURIComponent(workspace)}/${page}${id ? `/${encodeURIComponent(id)}` : ''}${params ? `?${new URLSearchParams(params)}` : ''}`

function showSignIn(message = '') {
  live.close()
  unmount?.()
  unmount = null
  $('top').hidden = true
  clear($('page'))
  $('signin').hidden = false
  $('signin-error').textContent = message
  document.title = 'Sign in · Console'
  $('token').focus()
}

async function signIn(event) {
  event.preventDefault()
  const token = $('token').value.trim()
  if (!token) return
  session.signIn(token)
  try {
    await loadWorkspaces()
    $('token').value = ''
    $('signin').hidden = true
    await render()
  } catch (err) {
    session.signOut()
    showSignIn(err.status === 401 ? 'That token is not the console token.' : `Could not sign in: ${err.message}`)
  }
}

async function loadWorkspaces() {
  workspaces = (await api('GET', '/workspaces?limit=200')).items
}

async function fillPicker(current) {
  const select = $('workspace')
  const known = new Map(workspaces.map((w) => [w.id, w]))
  // The whole name shows; the id too where two workspaces share a name.
  const names = new Map()
  for (const w of workspaces) names.set(w.name, (names.get(w.name) ?? 0) + 1)
  const label = (w) => (names.get(w.name) > 1 ? `${w.name} (${w.id})` : w.name)
  const options = workspaces.map((w) => h('option', { value: w.id }, label(w)))
  // A developer's customers, and a customer workspace opened by link, are listed too.
  const developer = known.get(current)?.kind === 'developer' ? current : null
  if (developer) {
    const customers = (await api('GET', `/workspaces?parent=${encodeURIComponent(developer)}&limit=200`).catch(() => ({ items: [] }))).items
    if (customers.length)
      options.push(
        h(
          'optgroup',
          { label: 'Customers of this workspace' },
          customers.map((c) => h('option', { value: c.id }, c.name)),
        ),
      )
  } else if (current && !known.has(current)) options.push(h('option', { value: current }, current))
  select.replaceChildren(...options)
  select.value = current
  // The id, for a screen reader and on hover: the name alone may not tell two workspaces apart.
  $('workspace-id').textContent = `Workspace id ${current}`
  select.title = current
}

async function render() {
  if (!session.token()) return showSignIn()
  if (!workspaces.length) {
    try {
      await loadWorkspaces()
    } catch (err) {
      if (err.status === 401) return showSignIn('Sign in again: the console token was not accepted.')
      return notice(`Could not load workspaces: ${err.message}`)
    }
  }
  const r = route()
  const workspace = r.workspace ?? sessionStorage.getItem(WS_KEY) ?? workspaces[0]?.id
  if (!workspace) {
    $('top').hidden = false
    clear($('page')).append(h('p', {}, 'No workspace yet: create one with POST /console/workspaces.'))
    return
  }
  if (!r.workspace) return go(workspace, r.page)
  sessionStorage.setItem(WS_KEY, workspace)
  $('signin').hidden = true
  $('top').hidden = false
  await fillPicker(workspace)
  for (const a of document.querySelectorAll('nav a[data-page]')) {
    a.href = link(workspace, a.dataset.page)
    const here = a.dataset.page === (SECTION[r.page] ?? r.page)
    if (here) a.setAttribute('aria-current', 'page')
    else a.removeAttribute('aria-current')
  }
  live.open(workspace)
  unmount?.()
  unmount = null
  const page = clear($('page'))
  document.title = `${TITLES[r.page]} · Console`
  const module = await PAGES[r.page]()
  if (route().page !== r.page) return // moved on while it loaded
  unmount = module.mount(page, { workspace, id: r.id, params: r.params, live, go, link }) ?? null
}

function streamState(state) {
  const el = $('stream-state')
  el.dataset.state = state
  el.textContent = { live: 'live', connecting: 'connecting…', retrying: 'reconnecting…', off: 'offline' }[state] ?? state
}

// The address's hash is the router's: the skip link moves focus without touching it.
document.querySelector('.skip').addEventListener('click', (e) => {
  e.preventDefault()
  $('main').focus()
})
$('signin-form').addEventListener('submit', signIn)
$('sign-out').addEventListener('click', () => {
  session.signOut()
  workspaces = []
  showSignIn('Signed out.')
})
$('workspace').addEventListener('change', (e) => go(e.target.value, SECTION[route().page] ?? route().page))
window.addEventListener('hashchange', () => void render())
window.addEventListener('console:unauthorized', () => {
  session.signOut()
  workspaces = []
  showSignIn('Sign in again: the console token was not accepted.')
})
live.addEventListener('state', (e) => streamState(e.detail))
void render()
