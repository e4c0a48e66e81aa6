// One campaign: what it is, its counts, why it stopped (lastError), the moves its state allows
// (start, pause, resume, cancel), and its recipients in the order given with each one's outcome
// and why a send failed or was skipped; a calling campaign's recipients show their call.
// Read again every 2 s while it is sending.
import { api, ws } from './api.js'
import { COLUMNS, count } from './campaigns.js'
import { badge, duration, h, LIVE, notice, when } from './dom.js'

const REFRESH_MS = 2000
const STATUSES = ['', 'failed', 'skipped', 'pending', 'sending', 'sent', 'delivered', 'read', 'replied']
/** Which moves each campaign status allows (machines/campaign.ts). */
const MOVES = { draft: ['start', 'cancel'], sending: ['pause', 'cancel'], paused: ['resume', 'cancel'] }
const MOVE_WORDS = { start: 'Start sending', pause: 'Pause', resume: 'Resume', cancel: 'Cancel campaign' }
/** A campaign in one of these has stopped calling: nobody is called again. */
export const FINISHED = new Set(['sent', 'failed', 'cancelled'])

/**
 * A calling campaign's recipient in words. `sent` says only that a call was placed: while the
 * call rings it is being called; once it ended unanswered it is not answered yet while the
 * campaign may call again, and not reached once it has finished.
 */
export function recipientBadge(r, c) {
  if (c.kind !== 'voice' || r.status !== 'sent') return badge('recipient', r.status)
  const [value, words] = r.call && LIVE.has(r.call.status) ? ['calling', 'calling'] : FINISHED.has(c.status) ? ['unreached', 'not reached'] : ['unanswered', 'not answered yet']
  return h('span', { class: `badge recipient recipient-${value}`, dataset: { value }, title: 'called (sent)' }, words)
}

export function mount(root, { workspace, id, params, go, link }) {
  const heading = h('h1', {}, 'Campaign')
  const facts = h('dl', { class: 'facts' })
  const stopped = h('p', { class: 'notice error campaign-error', role: 'alert', hidden: true })
  const actions = h('div', { class: 'actions campaign-actions' })
  const counts = h('ul', { class: 'counts', 'aria-label': 'Counts' })
  const filter = h(
    'select',
    { id: 'r-status' },
    STATUSES.map((s) => h('option', { value: s }, s || 'every recipient')),
  )
  filter.value = params.get('status') ?? ''
  filter.addEventListener('change', () => go(workspace, 'campaign', id, filter.value ? { status: filter.value } : undefined))
  const head = h('thead')
  const body = h('tbody')
  const more = h('button', { type: 'button', class: 'quiet', hidden: true }, 'More recipients')
  root.append(
    h('p', { class: 'crumbs' }, h('a', { href: link(workspace, 'campaigns') }, 'Campaigns'), ' / ', id),
    heading,
    stopped,
    actions,
    facts,
    counts,
    h(
      'section',
      { 'aria-labelledby': 'r-title' },
      h('h2', { id: 'r-title' }, 'Recipients'),
      h('div', { class: 'filters' }, h('div', { class: 'field' }, h('label', { for: 'r-status' }, 'Show'), filter)),
      h('table', { class: 'list recipients' }, h('caption', { class: 'visually-hidden' }, 'Recipients in the order given'), head, body),
      more,
    ),
  )

  let campaign = null
  const move = async (what, button) => {
    if (what === 'cancel' && !confirm('Cancel this campaign for good? Nobody not yet reached will be.')) return
    button.disabled = true
    try {
      paint(await api('POST', ws(workspace, `/campaigns/${encodeURIComponent(id)}/${what}`)))
      void loadRecipients(false)
    } catch (err) {
      notice(`Could not ${what} the campaign: ${err.message}`)
      button.disabled = false
    }
  }

  const fact = (term, value) => [h('dt', {}, term), h('dd', {}, value)]
  function paint(c) {
    const kindChanged = campaign?.kind !== c.kind
    campaign = c
    heading.textContent = c.name
    stopped.hidden = !c.lastError
    stopped.textContent = c.lastError ? `Stopped: ${c.lastError}` : ''
    actions.replaceChildren(
      ...(MOVES[c.status] ?? []).map((m) =>
        h('button', { type: 'button', class: m === 'cancel' ? 'danger' : m === 'pause' ? 'quiet' : '', dataset: { move: m }, onclick: (e) => move(m, e.currentTarget) }, MOVE_WORDS[m]),
      ),
    )
    facts.replaceChildren(
      ...fact('Status', badge('campaign', c.status)),
      ...fact('Kind', c.kind === 'voice' ? 'Calling campaign' : 'Broadcast (chat app)'),
      ...(c.kind === 'voice' ? fact('Purpose', c.purpose ?? '—') : fact('Template', c.template ?? '—')),
      ...fact('Scheduled', when(c.scheduledAt)),
      ...fact('Started', when(c.startedAt)),
      ...fact('Finished', when(c.finishedAt)),
    )
    // Once it has finished, nobody is called again: the unanswered are not reached, not "not answered yet".
    const label = (k, l) => (k === 'unanswered' && FINISHED.has(c.status) ? 'Not reached' : l)
    counts.replaceChildren(...COLUMNS[c.kind].map(([k, l]) => h('li', {}, `${label(k, l)} `, h('strong', { dataset: { count: k } }, String(count(c, k))))))
    if (kindChanged) {
      const cols = ['#', 'Number', 'Outcome', 'Why', ...(c.kind === 'voice' ? ['Call', 'Length', 'Hang-up'] : ['Sent'])]
      head.replaceChildren(
        h(
          'tr',
          {},
          cols.map((col) => h('th', { scope: 'col' }, col)),
        ),
      )
    }
  }

  const row = (r) =>
    h(
      'tr',
      { dataset: { index: String(r.index), status: r.status } },
      h('td', { class: 'num' }, String(r.index + 1)),
      h('td', { class: 'mono' }, r.phone),
      h('td', {}, recipientBadge(r, campaign)),
      h('td', { class: `why${r.error ? ' error' : ''}` }, r.error ?? ''),
      campaign.kind === 'voice'
        ? [
            h('td', {}, r.callId ? h('a', { href: link(workspace, 'call', r.callId) }, r.call?.status ?? 'call') : '—'),
            h('td', {}, r.call?.seconds ? duration(r.call.seconds) : '—'),
            h('td', {}, r.call?.hangup ?? '—'),
          ]
        : h('td', {}, when(r.sentAt)),
    )

  let cursor = null
  const loadRecipients = async (append) => {
    if (!campaign) return
    const q = new URLSearchParams({ limit: '100', ...(filter.value ? { status: filter.value } : {}), ...(append && cursor ? { cursor } : {}) })
    try {
      const page = await api('GET', ws(workspace, `/campaigns/${encodeURIComponent(id)}/recipients?${q}`))
      if (!append) body.replaceChildren()
      body.append(...page.items.map(row))
      if (!append && !page.items.length) body.append(h('tr', {}, h('td', { colspan: 7, class: 'empty' }, filter.value ? `No recipient is ${filter.value}.` : 'No recipient.')))
      cursor = page.nextCursor
      more.hidden = !cursor
    } catch (err) {
      notice(`Could not load the recipients: ${err.message}`)
    }
  }
  more.addEventListener('click', () => loadRecipients(true))

  const load = async () => {
    try {
      paint(await api('GET', ws(workspace, `/campaigns/${encodeURIComponent(id)}`)))
    } catch (err) {
      return notice(err.status === 404 ? `No campaign ${id} in this workspace.` : `Could not load the campaign: ${err.message}`)
    }
  }
  void load().then(() => loadRecipients(false))
  // While it sends, counts and outcomes move: read again (the first page only, so "More" pages stay until then).
  const timer = setInterval(() => {
    if (document.hidden || !campaign || !['sending', 'paused'].includes(campaign.status)) return
    void load().then(() => !cursor && loadRecipients(false))
  }, REFRESH_MS)
  return () => clearInterval(timer)
}
