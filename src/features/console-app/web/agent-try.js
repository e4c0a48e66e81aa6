// Trying an agent's draft: test chat (POST …/test-chat, the API's test chat: the real agent with
// side effects off) and a run of one of its simulation suites against the draft, whose result
// shows here once it is done (each call's expectations held or failed), linked to the run's page.
import { api, ws } from './api.js'
import { badge, h } from './dom.js'
import { expectationRow } from './simulation.js'
import { outcome } from './simulations.js'

/** A run is read this often until it is done (the run page's pace). */
const RUN_POLL_MS = 1500

function testChat(ctx) {
  let session = null
  const lines = h('ol', { class: 'chat-lines test-chat-lines', 'aria-live': 'polite', 'aria-label': 'Test chat' })
  const message = h('textarea', { id: 'test-message', rows: 2, class: 'wide', maxlength: 4000 })
  const error = h('p', { class: 'error', role: 'alert', hidden: true })
  const send = h('button', { type: 'submit' }, 'Send')
  const line = (who, text, extra) => h('li', { dataset: { speaker: who } }, h('b', {}, who === 'agent' ? 'Agent: ' : 'You: '), text, extra ?? null)
  const form = h(
    'form',
    {
      class: 'test-chat',
      onsubmit: async (e) => {
        e.preventDefault()
        const text = message.value
        send.disabled = true
        error.hidden = true
        try {
          const r = await api('POST', ctx.path('/test-chat'), session ? { message: text, session } : { message: text })
          session = r.session
          const tools = r.tools.length ? h('span', { class: 'sub' }, `tools: ${r.tools.map((t) => t.name).join(', ')}`) : null
          lines.append(line('customer', text), line('agent', r.reply, tools))
          message.value = ''
        } catch (err) {
          // Kept as typed: a refusal (too fast, website chat off, no model key) leaves the message to send again.
          error.textContent = `Not sent: ${err.message}`
          error.hidden = false
        }
        send.disabled = false
        message.focus()
      },
    },
    lines,
    h('div', { class: 'field' }, h('label', { for: 'test-message' }, 'Message, as a customer would write it'), message),
    error,
    h(
      'div',
      { class: 'form-actions' },
      send,
      h(
        'button',
        {
          type: 'button',
          class: 'quiet',
          onclick: () => {
            session = null
            lines.replaceChildren()
          },
        },
        'New chat',
      ),
    ),
  )
  return h('div', { class: 'try-part' }, h('h3', {}, 'Test chat (the draft)'), form)
}

function suiteRun(agent, ctx) {
  const pick = h('select', { id: 'suite-pick' })
  const run = h('button', { type: 'button', disabled: true }, 'Run suite against draft')
  const out = h('div', { class: 'suite-run', 'aria-live': 'polite' })
  const part = h('div', { class: 'try-part' }, h('h3', {}, 'Simulation'), h('div', { class: 'form-actions' }, h('label', { for: 'suite-pick' }, 'Suite'), pick, run), out)
  let timer = null
  const show = (r) => {
    const done = r.status === 'done' || r.status === 'cancelled'
    out.replaceChildren(
      h(
        'p',
        { class: 'run-outcome', dataset: { status: r.status, outcome: outcome(r) } },
        badge('sim', outcome(r)),
        ` ${r.totals.passed} passed, ${r.totals.failed} failed, ${r.totals.finished} of ${r.totals.calls} finished · `,
        h('a', { href: ctx.link(ctx.workspace, 'simulation', r.id) }, 'the run’s page'),
      ),
      done
        ? h(
            'ul',
            { class: 'expectations' },
            r.results.flatMap((res) => res.expectations.map(expectationRow)),
          )
        : null,
    )
    return done
  }
  const follow = async (id) => {
    const r = await api('GET', ws(ctx.workspace, `/simulations/runs/${encodeURIComponent(id)}`))
    if (show(r)) run.disabled = false
    else timer = setTimeout(() => follow(id).catch(fail), RUN_POLL_MS)
  }
  const fail = (err) => {
    out.replaceChildren(h('p', { class: 'error', role: 'alert' }, `No run: ${err.message}`))
    run.disabled = false
  }
  run.addEventListener('click', async () => {
    run.disabled = true
    out.replaceChildren(h('p', { class: 'hint' }, 'Starting…'))
    try {
      const r = await api('POST', ws(ctx.workspace, `/simulations/suites/${encodeURIComponent(pick.value)}/runs`), { target: 'draft' })
      show(r)
      await follow(r.id)
    } catch (err) {
      fail(err)
    }
  })
  api('GET', ws(ctx.workspace, '/simulations/suites?limit=100'))
    .then(({ items }) => {
      const mine = items.filter((s) => s.agent === agent.id)
      pick.replaceChildren(...mine.map((s) => h('option', { value: s.id }, `${s.name}${s.requiredToPublish ? ' (gates publishing)' : ''}`)))
      run.disabled = !mine.length
      if (!mine.length) out.replaceChildren(h('p', { class: 'empty' }, 'No suite for this agent: make one with POST /api/v1/simulations/suites.'))
    })
    .catch(fail)
  return { el: part, stop: () => clearTimeout(timer) }
}

export function section(agent, ctx) {
  const sims = suiteRun(agent, ctx)
  return {
    el: h('section', { class: 'panel agent-section', 'aria-labelledby': 'try-title' }, h('h2', { id: 'try-title' }, 'Try the draft'), testChat(ctx), sims.el),
    stop: sims.stop,
  }
}
