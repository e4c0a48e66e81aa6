// An agent's versions: what it serves and what the draft changed, Publish (with a note),
// Unpublish, each version (label, kind, who, when, the panels it changed) with Roll back, and the
// diff of two versions or of the draft against the published one. Every move is the versions
// service's (the legacy API's rules): a refusal (409: a suite gating publishing failed, nothing
// published…) shows here in its words.
import { api } from './api.js'
import { announce, badge, h, when } from './dom.js'

const show = (v) => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v))

/** A diff as a table: field path, old, new. */
export function diffTable(changes, oldLabel, newLabel) {
  const rows = Object.entries(changes)
  if (!rows.length) return h('p', { class: 'empty' }, 'No difference.')
  return h(
    'table',
    { class: 'list diff' },
    h('caption', { class: 'visually-hidden' }, `Changes from ${oldLabel} to ${newLabel}`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, oldLabel), h('th', { scope: 'col' }, newLabel))),
    h(
      'tbody',
      {},
      rows.map(([k, c]) => h('tr', { dataset: { field: k } }, h('th', { scope: 'row', class: 'mono' }, k), h('td', { class: 'old' }, show(c.old)), h('td', { class: 'new' }, show(c.new)))),
    ),
  )
}

export function section(_agent, ctx) {
  const status = h('p', { class: 'publication', role: 'status' })
  const error = h('p', { class: 'error', role: 'alert', hidden: true })
  const summary = h('input', { id: 'publish-summary', class: 'wide', maxlength: 1000, autocomplete: 'off' })
  const publish = h('button', { type: 'button', class: 'publish' }, 'Publish draft')
  const unpublish = h('button', { type: 'button', class: 'danger' }, 'Unpublish')
  const draftDiff = h('button', { type: 'button', class: 'quiet draft-diff' }, 'What the draft changes')
  const body = h('tbody')
  const pickA = h('select', { id: 'diff-a' })
  const pickB = h('select', { id: 'diff-b' })
  const diffOut = h('div', { class: 'diff-out', 'aria-live': 'polite' })

  const act = async (button, what, fn, moves = true) => {
    button.disabled = true
    error.hidden = true
    try {
      const said = await fn()
      // A move changes what a diff shown compared: it is asked again if wanted.
      if (moves) diffOut.replaceChildren()
      if (said) announce(said)
    } catch (err) {
      error.textContent = `${what}: ${err.message}`
      error.hidden = false
    }
    // Enabled again before the read, which disables what the new state does not allow.
    button.disabled = false
    await load().catch(() => {})
  }

  publish.addEventListener('click', () =>
    act(publish, 'Not published', async () => {
      const v = await api('POST', ctx.path('/publish'), summary.value.trim() ? { changeSummary: summary.value.trim() } : {})
      summary.value = ''
      return `Published ${v.label}`
    }),
  )
  unpublish.addEventListener('click', () =>
    act(unpublish, 'Not unpublished', async () => {
      await api('POST', ctx.path('/unpublish'))
      return 'Unpublished: nothing is served'
    }),
  )
  draftDiff.addEventListener('click', () =>
    act(
      draftDiff,
      'No diff',
      async () => {
        const d = await api('GET', ctx.path('/diff-draft'))
        diffOut.replaceChildren(h('h3', {}, `Draft against v${d.published}`), diffTable(d.changes, `v${d.published}`, 'draft'))
      },
      false,
    ),
  )
  const compare = h('button', { type: 'button', class: 'quiet compare' }, 'Compare')
  compare.addEventListener('click', () =>
    act(
      compare,
      'No diff',
      async () => {
        const [a, b] = [pickA.value, pickB.value]
        const d = await api('GET', ctx.path(`/versions/${a}/diff/${b}`))
        diffOut.replaceChildren(h('h3', {}, `v${a} → v${b}`), diffTable(d.changes, `v${a}`, `v${b}`))
      },
      false,
    ),
  )

  const rollbackButton = (v) => {
    const b = h('button', { type: 'button', class: 'quiet', 'aria-label': `Roll back to ${v.label}` }, 'Roll back')
    b.addEventListener('click', () =>
      act(b, 'Not rolled back', async () => {
        const r = await api('POST', ctx.path(`/versions/${v.number}/rollback`))
        // The draft is now the version's: the settings form shows it.
        ctx.reload()
        return `Rolled back to ${v.label}: the agent as it was is saved as v${r.backup}, and v${r.published} is published`
      }),
    )
    return b
  }

  const load = async () => {
    const { status: s, versions } = await api('GET', ctx.path('/versions'))
    status.replaceChildren(
      s.status === 'published'
        ? h(
            'span',
            {},
            'Serving ',
            h('strong', {}, `v${s.publishedVersion}`),
            ` since ${when(s.lastPublishedAt)}. `,
            s.hasUnpublishedChanges ? `The draft changes: ${s.changedFields.join(', ')}.` : 'The draft is what is served.',
          )
        : h('span', {}, h('strong', {}, 'Not published'), ': nobody is served this agent (test chat talks to the draft).'),
    )
    unpublish.disabled = s.status !== 'published'
    draftDiff.disabled = s.status !== 'published'
    const options = () => versions.map((v) => h('option', { value: v.number }, `${v.label} (${v.kind})`))
    pickA.replaceChildren(...options())
    pickB.replaceChildren(...options())
    if (versions.length > 1) pickA.value = String(versions[1].number)
    compare.disabled = versions.length < 2
    body.replaceChildren(
      ...versions.map((v) =>
        h(
          'tr',
          { dataset: { version: v.number } },
          h('th', { scope: 'row' }, v.label, v.isActive ? [' ', badge('served', 'served')] : null, v.changeSummary ? h('span', { class: 'sub' }, v.changeSummary) : null),
          h('td', {}, v.kind),
          h('td', { class: 'mono' }, v.createdBy),
          h('td', {}, when(v.createdAt)),
          h('td', { dataset: { col: 'changed' } }, v.changedFields === null ? 'first version' : v.changedFields.length ? v.changedFields.join(', ') : 'nothing'),
          h('td', {}, rollbackButton(v)),
        ),
      ),
    )
  }
  ctx.onChanged = () => void load().catch(() => {})
  void load().catch((err) => {
    error.textContent = `Could not read the versions: ${err.message}`
    error.hidden = false
  })

  const el = h(
    'section',
    { class: 'panel agent-section versions', 'aria-labelledby': 'versions-title' },
    h('h2', { id: 'versions-title' }, 'Versions'),
    status,
    h('div', { class: 'field' }, h('label', { for: 'publish-summary' }, 'What this publish changes (optional)'), summary),
    h('div', { class: 'form-actions' }, publish, unpublish, draftDiff),
    error,
    h(
      'table',
      { class: 'list compact' },
      h('caption', { class: 'visually-hidden' }, 'Versions, newest first'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Version', 'Kind', 'Who', 'When', 'Changed', ''].map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      body,
    ),
    h('div', { class: 'form-actions' }, h('label', { for: 'diff-a' }, 'Compare'), pickA, h('label', { for: 'diff-b' }, 'with'), pickB, compare),
    diffOut,
  )
  return { el }
}
