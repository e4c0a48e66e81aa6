// One simulation run: its outcome, target, totals and duration, then each call it made with every
// expectation green (held) or red (did not), written in words too, with the evidence that decided
// it, and links to the call's page (transcript) and its recording; a replayed caller's turns, each
// with its recorded audio beside the new agent's answer. Read again every 1.5 s until done.
import { api, session, ws } from './api.js'
import { badge, h, notice, when } from './dom.js'
import { outcome, seconds, target } from './simulations.js'

const REFRESH_MS = 1500

/** What an expectation asks, in words (docs/api/simulations.md). */
function asks(e) {
  switch (e.kind) {
    case 'field':
      return e.equals !== undefined ? `field ${e.name} is ${JSON.stringify(e.equals)}` : `field ${e.name} is one of ${e.oneOf.map((v) => JSON.stringify(v)).join(', ')}`
    case 'says':
      return `the agent says “${e.text}”`
    case 'neverSays':
      return `the agent never says “${e.text}”`
    case 'tool':
      return `the agent calls ${e.name}`
    case 'ended':
      return `the ${e.by} ends the call`
    case 'maxTurns':
      return `at most ${e.turns} agent turns`
    case 'slowestTurn':
      return `no answer slower than ${e.ms} ms`
    default:
      return e.kind
  }
}

/** The evidence that decided it, in words. */
function evidence(ev) {
  const parts = []
  if (ev.field !== undefined) parts.push(`${ev.field}: ${ev.value === undefined || ev.value === null ? 'not captured' : JSON.stringify(ev.value)}`)
  if (ev.lines) parts.push(ev.lines.length ? ev.lines.map((l) => `${l.speaker}: “${l.text}”`).join(' · ') : 'no such line')
  if (ev.tools) parts.push(`tools called: ${ev.tools.length ? ev.tools.join(', ') : 'none'}`)
  if (ev.endedBy !== undefined) parts.push(`ended by ${ev.endedBy ?? 'nobody known'}${ev.hangup ? ` (${ev.hangup})` : ''}`)
  if (ev.turns !== undefined) parts.push(`${ev.turns} agent turns`)
  if (ev.slowest !== undefined) parts.push(ev.slowest ? `slowest answer ${ev.slowest.ms} ms` : 'no answer to time')
  return parts.join('; ')
}

export const expectationRow = (e) =>
  h(
    'li',
    { class: `expectation ${e.passed ? 'held' : 'broken'}`, dataset: { passed: String(e.passed), kind: e.kind } },
    h('span', { class: 'verdict' }, e.passed ? '✓ held' : '✗ failed'),
    ' ',
    h('span', { class: 'asks' }, asks(e)),
    h('span', { class: 'evidence' }, evidence(e.evidence ?? {})),
  )

export function mount(root, { workspace, id, link }) {
  const heading = h('h1', {}, 'Run')
  const facts = h('dl', { class: 'facts' })
  const calls = h('div', { class: 'sim-results' })
  root.append(h('p', { class: 'crumbs' }, h('a', { href: link(workspace, 'simulations') }, 'Simulations'), ' / ', id), heading, facts, h('h2', {}, 'Calls'), calls)

  const fact = (term, value) => [h('dt', {}, term), h('dd', {}, value)]
  // A website chat has no call page: its transcript shows here.
  const chat = (r) =>
    h(
      'details',
      { class: 'sim-chat' },
      h('summary', {}, 'Website chat transcript'),
      h(
        'ol',
        { class: 'chat-lines' },
        r.transcript.map((l) => h('li', { dataset: { speaker: l.speaker } }, h('b', {}, l.speaker === 'agent' ? 'Agent: ' : 'Visitor: '), l.text)),
      ),
    )
  const callLinks = (r) => {
    const c = r.call
    if (!c) return r.conversation && r.transcript.length ? chat(r) : h('p', { class: 'empty' }, 'No call placed yet.')
    const rec = c.recording ? new URL(c.recording, location.href) : null
    return h(
      'p',
      { class: 'call-links' },
      h('a', { href: link(workspace, 'call', c.id), class: 'transcript-link' }, 'Transcript and call'),
      ' · ',
      rec ? h('a', { href: rec.pathname + rec.search, class: 'recording-link', target: '_blank', rel: 'noopener' }, 'Recording') : 'not recorded',
    )
  }
  // A replayed caller (a scenario from a call): each of its turns, the recorded audio it played
  // (fetched under the console token when asked for), beside the new agent's answer to it.
  const replayedTurns = (r) => {
    const lines = run.replayed?.[r.scenario]
    if (!lines || !r.call) return null
    const turns = []
    let k = 0
    r.transcript.forEach((l, i) => {
      if (l.speaker !== 'customer') return
      const line = k++
      const answer = r.transcript.slice(i + 1).find((next) => next.speaker === 'agent')
      const audio = h('audio', { controls: true, preload: 'none', hidden: true })
      const hear = h('button', { type: 'button', class: 'hear-turn', disabled: !lines[line] }, lines[line] ? '▶ Recorded turn' : 'keys')
      hear.addEventListener('click', async () => {
        hear.disabled = true
        const path = ws(workspace, `/simulations/runs/${encodeURIComponent(run.id)}/replayed/${encodeURIComponent(r.scenario)}/${line}`)
        const res = await fetch(`/console${path}`, { headers: { authorization: `Bearer ${session.token() ?? ''}` } })
        if (!res.ok) return notice(`Could not load the caller’s turn: ${(await res.json().catch(() => null))?.error ?? res.status}`)
        audio.src = URL.createObjectURL(await res.blob())
        audio.hidden = false
        hear.hidden = true
        void audio.play().catch(() => {})
      })
      turns.push(h('li', { class: 'replayed-turn' }, h('div', {}, hear, audio, ' ', h('b', {}, 'Caller: '), l.text), h('div', {}, h('b', {}, 'Agent: '), answer?.text ?? '—')))
    })
    return h('details', { class: 'replayed' }, h('summary', {}, 'Replayed caller, turn by turn'), h('ol', {}, turns))
  }
  const result = (r) =>
    h(
      'section',
      { class: 'sim-result', dataset: { status: r.status, scenario: r.scenario }, 'aria-label': `${r.name}, call ${r.instance}` },
      h('h3', {}, `${r.name}`, r.instance > 1 ? ` #${r.instance}` : '', ' ', badge('sim', r.status)),
      r.error ? h('p', { class: 'error' }, r.error) : null,
      callLinks(r),
      replayedTurns(r),
      r.expectations.length
        ? h('ul', { class: 'expectations' }, r.expectations.map(expectationRow))
        : h('p', { class: 'empty' }, r.status === 'passed' ? 'No expectation: the call only had to complete.' : ''),
    )

  let run = null
  const load = async () => {
    try {
      run = await api('GET', ws(workspace, `/simulations/runs/${encodeURIComponent(id)}`))
    } catch (err) {
      return notice(err.status === 404 ? `No run ${id} in this workspace.` : `Could not load the run: ${err.message}`)
    }
    heading.textContent = `${run.suiteName ?? run.suite} against ${target(run.target)}`
    facts.replaceChildren(
      ...fact('Result', badge('sim', outcome(run))),
      ...fact('Target', target(run.target)),
      ...fact('Calls', `${run.totals.passed} passed, ${run.totals.failed} failed, ${run.totals.finished} of ${run.totals.calls} finished`),
      ...fact('Duration', seconds(run.durationMs)),
      ...fact('Started', when(run.startedAt)),
      ...fact('Suite', run.suiteName ? `${run.suiteName} (${run.suite})` : `${run.suite} (deleted)`),
    )
    calls.replaceChildren(...run.results.map(result))
  }
  void load()
  const timer = setInterval(() => {
    if (!document.hidden && (!run || run.status === 'queued' || run.status === 'running')) void load()
  }, REFRESH_MS)
  return () => clearInterval(timer)
}
