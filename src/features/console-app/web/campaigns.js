// Campaigns: broadcasts and calling campaigns in two tables (a call is not read or replied to, so
// each kind has its own columns), read again every 1.5 s while the page is open so counts move as
// they send; a campaign's name opens it (campaign.js). "New campaign" creates a draft.
import { api, ws } from './api.js'
import { badge, h, notice, when } from './dom.js'

/** The counts each kind shows, as [count key, column heading]. Voice: `sent` is called, `delivered` answered. */
export const COLUMNS = {
  chatapp: [
    ['recipients', 'Recipients'],
    ['sent', 'Sent'],
    ['delivered', 'Delivered'],
    ['read', 'Read'],
    ['replied', 'Replied'],
    ['failed', 'Failed'],
    ['skipped', 'Skipped'],
  ],
  voice: [
    ['recipients', 'Recipients'],
    ['sent', 'Called'],
    ['delivered', 'Answered'],
    ['unanswered', 'Not answered yet'],
    ['failed', 'Failed'],
    ['skipped', 'Skipped'],
  ],
}
/** A count of a campaign by column key (`unanswered`: called and not answered, or still ringing). */
export const count = (c, key) => (key === 'unanswered' ? (c.counts?.sent ?? 0) - (c.counts?.delivered ?? 0) : (c.counts?.[key] ?? 0))
const REFRESH_MS = 1500

export function mount(root, { workspace, go, link }) {
  const tables = {}
  const table = (kind, title) => {
    const body = h('tbody')
    const el = h(
      'section',
      { class: 'campaign-kind', dataset: { kind }, 'aria-labelledby': `k-${kind}` },
      h('h2', { id: `k-${kind}` }, title),
      h(
        'table',
        { class: 'list' },
        h('caption', { class: 'visually-hidden' }, `${title}, newest first`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Campaign'),
            h('th', { scope: 'col' }, 'Status'),
            // The list holds finished campaigns too, whose unanswered are not called again: no "yet" here.
            COLUMNS[kind].map(([k, label]) => h('th', { scope: 'col', class: 'num' }, k === 'unanswered' ? 'Not answered' : label)),
            h('th', { scope: 'col' }, 'Started'),
          ),
        ),
        body,
      ),
    )
    tables[kind] = { el, body }
    return el
  }
  const updated = h('p', { class: 'hint', role: 'status' })
  const empty = h('p', { class: 'empty', hidden: true }, 'No campaign yet.')
  root.append(h('h1', {}, 'Campaigns'), createForm(workspace, go), updated, empty, table('chatapp', 'Broadcasts (chat app)'), table('voice', 'Calling campaigns'))

  let announced = false
  const load = async () => {
    try {
      const { items } = await api('GET', ws(workspace, '/campaigns?limit=50'))
      for (const kind of ['chatapp', 'voice']) {
        const mine = items.filter((c) => c.kind === kind)
        tables[kind].el.hidden = !mine.length
        tables[kind].body.replaceChildren(
          ...mine.map((c) =>
            h(
              'tr',
              { dataset: { campaignId: c.id } },
              h('th', { scope: 'row' }, h('a', { href: link(workspace, 'campaign', c.id) }, c.name), h('span', { class: 'mono sub' }, c.id)),
              h('td', {}, badge('campaign', c.status), c.lastError ? h('span', { class: 'sub error' }, c.lastError) : null),
              COLUMNS[kind].map(([k]) => h('td', { class: 'num', dataset: { count: k } }, String(count(c, k)))),
              h('td', {}, when(c.startedAt)),
            ),
          ),
        )
      }
      empty.hidden = items.length > 0
      // Said once: a status region repeating every 1.5 s would drown a screen reader.
      if (!announced) updated.textContent = 'Counts refresh every 1.5 seconds.'
      announced = true
    } catch (err) {
      notice(`Could not load campaigns: ${err.message}`)
    }
  }
  void load()
  const timer = setInterval(() => !document.hidden && load(), REFRESH_MS)
  return () => clearInterval(timer)
}

/** "New campaign": a draft from a name, an agent, a kind with its purpose or template, and numbers. */
function createForm(workspace, go) {
  const field = (id, label, control, hint) => h('div', { class: 'field' }, h('label', { for: id }, label), control, hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null)
  const name = h('input', { id: 'c-name', class: 'wide', name: 'name', required: true, maxlength: 120, autocomplete: 'off' })
  const agent = h('select', { id: 'c-agent', class: 'wide', name: 'agent', required: true })
  const kind = h(
    'select',
    { id: 'c-kind', class: 'wide', name: 'kind' },
    h('option', { value: 'voice' }, 'Calling campaign (voice)'),
    h('option', { value: 'chatapp' }, 'Broadcast (chat app template)'),
  )
  const purpose = h('textarea', { id: 'c-purpose', class: 'wide', name: 'purpose', rows: 2, maxlength: 300 })
  const template = h('input', { id: 'c-template', class: 'wide', name: 'template', autocomplete: 'off' })
  const recipients = h('textarea', { id: 'c-recipients', class: 'wide', name: 'recipients', rows: 4, required: true, spellcheck: false, 'aria-describedby': 'c-recipients-hint' })
  const error = h('p', { class: 'error', role: 'alert', hidden: true })
  const purposeField = field('c-purpose', 'Purpose (said first on each call)', purpose)
  const templateField = field('c-template', 'Template name (approved, on the agent’s chat-app number)', template)
  const byKind = () => {
    purposeField.hidden = kind.value !== 'voice'
    templateField.hidden = kind.value !== 'chatapp'
  }
  kind.addEventListener('change', byKind)
  byKind()
  const form = h(
    'form',
    {
      class: 'create-campaign',
      onsubmit: async (e) => {
        e.preventDefault()
        const button = form.querySelector('button[type="submit"]')
        button.disabled = true
        error.hidden = true
        const numbers = recipients.value.split(/[\s,;]+/).filter(Boolean)
        const body = {
          name: name.value.trim(),
          agent: agent.value,
          kind: kind.value,
          recipients: numbers,
          ...(kind.value === 'voice' ? { purpose: purpose.value.trim() } : { template: template.value.trim() }),
        }
        try {
          const made = await api('POST', ws(workspace, '/campaigns'), body)
          go(workspace, 'campaign', made.id)
        } catch (err) {
          // The service names the field it refuses (recipients[3], purpose…); the form keeps what was typed.
          error.textContent = `Not created: ${err.message}${err.body?.field ? ` (${err.body.field})` : ''}`
          error.hidden = false
        }
        button.disabled = false
      },
    },
    h('div', { class: 'form-grid' }, field('c-name', 'Name', name), field('c-agent', 'Agent', agent), field('c-kind', 'Kind', kind), purposeField, templateField),
    field('c-recipients', 'Recipients', recipients, 'Phone numbers, one a line (or separated by commas); repeats are sent to once. A number that is not a contact, or has opted out, is skipped.'),
    error,
    h('button', { type: 'submit' }, 'Create draft'),
  )
  api('GET', ws(workspace, '/agents'))
    .then(({ items }) => agent.replaceChildren(...items.map((a) => h('option', { value: a.id }, `${a.name} (${a.id})`))))
    .catch((err) => notice(`Could not list the agents: ${err.message}`))
  return h('details', { class: 'panel new-campaign' }, h('summary', {}, 'New campaign'), form)
}
