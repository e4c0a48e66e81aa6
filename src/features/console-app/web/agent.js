// One agent: its settings as the API holds them, edited into the draft (agent-settings.js); its
// versions with publish, roll back, unpublish and the diff of two (agent-versions.js); and trying
// the draft — test chat and a run of one of its simulation suites (agent-try.js). Each section
// reloads the others' view of the publication when it moves it.
import { api, ws } from './api.js'
import { h, notice } from './dom.js'

const STYLE_ID = 'agents-css'

/** The agents page's own styles, added the first time it opens (the first load stays small). */
function addStyles() {
  if (document.getElementById(STYLE_ID)) return
  document.head.append(h('link', { id: STYLE_ID, rel: 'stylesheet', href: new URL('./agents.css', import.meta.url).href }))
}

export function mount(root, { workspace, id, link }) {
  addStyles()
  const title = h('h1', {}, 'Agent')
  const sections = h('div', { class: 'agent-page' }, h('p', { class: 'empty' }, 'Loading the agent…'))
  root.append(h('p', { class: 'crumbs' }, h('a', { href: link(workspace, 'agents') }, 'Agents')), title, sections)
  const path = (p = '') => ws(workspace, `/agents/${encodeURIComponent(id)}${p}`)
  let alive = true
  const cleanups = []
  const ctx = {
    workspace,
    id,
    path,
    link,
    /** Called by a section that changed the draft or the publication: the versions section reads again. */
    changed: () => ctx.onChanged?.(),
    onChanged: null,
    /** The draft changed under the form (a rollback): every section is drawn again from the agent. */
    reload: () => render(),
  }
  const render = () =>
    Promise.all([api('GET', path()), import('./agent-settings.js'), import('./agent-versions.js'), import('./agent-try.js')])
      .then(([agent, settings, versions, trying]) => {
        if (!alive) return
        for (const stop of cleanups.splice(0)) stop()
        title.textContent = agent.name
        document.title = `${agent.name} · Console`
        const parts = [settings.section(agent, ctx), versions.section(agent, ctx), trying.section(agent, ctx)]
        sections.replaceChildren(...parts.map((p) => p.el))
        for (const p of parts) if (p.stop) cleanups.push(p.stop)
      })
      .catch((err) => {
        sections.replaceChildren(h('p', { class: 'error' }, `Could not load the agent: ${err.message}`))
        notice(`Could not load the agent: ${err.message}`)
      })
  void render()
  return () => {
    alive = false
    for (const stop of cleanups) stop()
  }
}
