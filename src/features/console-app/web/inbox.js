// Inbox: conversations on every channel, newest first; open one to read it, take it over (the
// agent stops answering), reply on its own channel (website chat, chat app, bot app, email), or
// resolve it. The open conversation and the list are read again every 3 s.
import { api, ws } from './api.js'
import { badge, clock, h, notice, when } from './dom.js'

const CHANNELS = ['', 'web', 'chatapp', 'botapp', 'email', 'voice']
const STATUSES = ['', 'active', 'escalated', 'handled', 'resolved']
const REFRESH_MS = 3000

/** What a teammate's reply does on each channel (the service's rules: docs/api/console.md). */
const REPLY_HINTS = {
  web: 'the visitor’s open chat shows it at once.',
  chatapp: 'it goes from the conversation’s number, while the customer’s 24-hour window is open (they wrote in the last 24 hours).',
  botapp: 'the bot sends it to the chat.',
  email: 'it is emailed to the customer.',
}

const text = (m) => m.parts.map((p) => (p.type === 'text' ? p.text : p.type === 'image' ? `[image${p.alt ? `: ${p.alt}` : ''}]` : `[${p.type}]`)).join(' ')
/** The customer in words (the read's `who`: a contact's name, a number, an address, a visitor). */
const who = (c) => c.who?.label ?? c.customer?.phone ?? 'Customer'
/** Their number or address beside a contact's name, when there is a name. */
const reach = (c) => (c.who?.name ? [c.who.phone, c.who.email].filter(Boolean).join(' · ') : '')
const AUTHOR = { customer: '', agent: 'Agent: ', teammate: 'Teammate: ' }
/** A voice conversation whose call is over (the service resolves it then) has nobody left to take over from. */
const callOver = (c) => c.channel === 'voice' && c.status === 'resolved'

/** Conversations read per page (the console route's largest page is 100). */
const PAGE = 50

export function mount(root, { workspace, id, params, go, link }) {
  const channel = h(
    'select',
    { id: 'i-channel' },
    CHANNELS.map((c) => h('option', { value: c }, c || 'every channel')),
  )
  const status = h(
    'select',
    { id: 'i-status' },
    STATUSES.map((c) => h('option', { value: c }, c || 'any status')),
  )
  channel.value = params.get('channel') ?? ''
  status.value = params.get('status') ?? ''
  const filters = () => Object.fromEntries(Object.entries({ channel: channel.value, status: status.value }).filter(([, v]) => v))
  const refilter = () => go(workspace, 'inbox', id, filters())
  channel.addEventListener('change', refilter)
  status.addEventListener('change', refilter)
  const list = h('ul', { class: 'conversations', 'aria-label': 'Conversations' })
  const more = h('button', { type: 'button', class: 'quiet more-conversations', hidden: true }, 'Older conversations')
  const thread = h('section', { class: 'thread', 'aria-label': 'Conversation' })
  root.append(
    h('h1', {}, 'Inbox'),
    h('div', { class: 'filters' }, h('div', { class: 'field' }, h('label', { for: 'i-channel' }, 'Channel'), channel), h('div', { class: 'field' }, h('label', { for: 'i-status' }, 'Status'), status)),
    h('div', { class: 'inbox' }, h('div', {}, list, more), thread),
  )

  // Read again every few seconds: as many pages as are shown, so the older ones "More" brought stay.
  let pages = 1
  more.addEventListener('click', () => {
    pages += 1
    void loadList()
  })
  const readPages = async () => {
    const items = []
    let cursor = null
    for (let i = 0; i < pages; i++) {
      const page = await api('GET', ws(workspace, `/conversations?${new URLSearchParams({ ...filters(), limit: String(PAGE), ...(cursor ? { cursor } : {}) })}`))
      items.push(...page.items)
      cursor = page.nextCursor
      if (!cursor) break
    }
    more.hidden = !cursor
    return items
  }
  const loadList = async () => {
    try {
      const items = await readPages()
      list.replaceChildren(
        ...items.map((c) =>
          h(
            'li',
            { class: c.id === id ? 'selected' : '', dataset: { conversationId: c.id } },
            h(
              'a',
              { href: link(workspace, 'inbox', c.id, filters()), 'aria-current': c.id === id ? 'true' : null },
              h('span', { class: 'row-head' }, h('span', { class: 'who' }, who(c)), badge('channel', c.channel), badge('conversation', c.status)),
              reach(c) ? h('span', { class: 'reach' }, reach(c)) : null,
              h('span', { class: 'preview' }, c.lastMessage ? `${AUTHOR[c.lastMessage.author] ?? ''}${c.lastMessage.text}` : 'No message yet.'),
              h('span', { class: 'when' }, when(c.lastMessage?.at ?? c.lastInboundAt ?? c.createdAt)),
            ),
          ),
        ),
      )
      if (!items.length) list.append(h('li', { class: 'empty' }, 'No conversation here yet.'))
    } catch (err) {
      notice(`Could not load the inbox: ${err.message}`)
    }
  }

  let conversation = null
  const log = h('ol', { class: 'messages', 'aria-label': 'Messages' })
  const act = (label, path, cls = '') =>
    h(
      'button',
      {
        type: 'button',
        class: cls,
        dataset: { action: path },
        onclick: async (e) => {
          e.target.disabled = true
          try {
            conversation = await api('POST', ws(workspace, `/conversations/${encodeURIComponent(id)}/${path}`))
            paint()
            void loadList()
          } catch (err) {
            notice(`Could not ${label.toLowerCase()}: ${err.message}`)
          }
          e.target.disabled = false
        },
      },
      label,
    )
  const takeover = act('Take over', 'takeover')
  const resolve = act('Resolve', 'resolve', 'quiet')
  const state = h('p', { class: 'conversation-state' })
  const title = h('h2', { class: 'thread-title' }, 'Conversation')
  const reply = h('textarea', { id: 'reply', rows: 3, maxlength: 4000, required: true })
  const replyNote = h('p', { class: 'hint', id: 'reply-hint' })
  const replyError = h('p', { class: 'error', id: 'reply-error', role: 'alert', hidden: true })
  const refusal = (message) => {
    replyError.textContent = message
    replyError.hidden = !message
  }
  const replyForm = h(
    'form',
    {
      class: 'reply',
      onsubmit: async (e) => {
        e.preventDefault()
        const body = reply.value.trim()
        if (!body) return
        const button = replyForm.querySelector('button')
        button.disabled = true
        refusal('')
        try {
          await api('POST', ws(workspace, `/conversations/${encodeURIComponent(id)}/messages`), { text: body })
          reply.value = ''
          await Promise.all([loadThread(), loadList()])
        } catch (err) {
          // A refusal (409: window closed, number or bot gone…) stays beside the form; the text is kept.
          refusal(`Not sent: ${err.message}`)
        }
        button.disabled = false
      },
    },
    h('label', { for: 'reply' }, 'Reply as a teammate'),
    reply,
    replyNote,
    replyError,
    h('button', { type: 'submit' }, 'Send'),
  )
  reply.setAttribute('aria-describedby', 'reply-hint reply-error')

  const paint = () => {
    if (!conversation) return
    const c = conversation
    title.replaceChildren(who(c), reach(c) ? h('span', { class: 'sub' }, reach(c)) : '')
    state.replaceChildren(badge('channel', c.channel), ' ', badge('conversation', c.status), ` started ${when(c.createdAt)}`, callOver(c) ? ' · the call has ended' : '')
    takeover.hidden = c.status === 'handled' || callOver(c)
    resolve.hidden = c.status === 'resolved'
    // The chat app takes a teammate's text only inside the customer's 24-hour window (the service refuses it after).
    const shut = c.replyWindow && !c.replyWindow.open
    const hint = c.test || shut ? null : REPLY_HINTS[c.channel]
    replyForm.hidden = false
    replyForm.classList.toggle('closed', !hint)
    reply.disabled = !hint
    replyForm.querySelector('button').disabled = !hint
    replyNote.textContent = hint
      ? `Sending takes the conversation over (the agent stops answering); ${hint}`
      : c.test
        ? 'A test chat has nobody on the other end to write to.'
        : shut
          ? `The customer's 24-hour window ${c.replyWindow.closesAt ? `closed ${when(c.replyWindow.closesAt)}` : 'never opened (they have not written)'}: the chat app takes no free text from a teammate until they write again; only an approved template can reach them.`
          : 'A voice call cannot take a written message.'
  }

  // The published version that wrote an agent reply (none for test chat, which talks to the draft).
  const version = (m) => (m.agentVersion == null ? '' : h('span', { class: 'version', title: `answered by version ${m.agentVersion}` }, ` v${m.agentVersion}`))

  const loadThread = async () => {
    if (!id) return
    try {
      const [c, page] = await Promise.all([
        api('GET', ws(workspace, `/conversations/${encodeURIComponent(id)}`)),
        api('GET', ws(workspace, `/conversations/${encodeURIComponent(id)}/messages?limit=100`)),
      ])
      conversation = c
      paint()
      const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4
      log.replaceChildren(
        ...page.items
          .reverse()
          .map((m) =>
            h(
              'li',
              { class: `message ${m.author}` },
              h('span', { class: 'speaker' }, m.author === 'customer' ? who(c) : m.author === 'teammate' ? 'Teammate' : ['Agent', version(m)]),
              h('time', { datetime: m.createdAt }, clock(m.createdAt)),
              h('span', { class: 'text' }, text(m)),
            ),
          ),
      )
      if (!page.items.length) log.append(h('li', { class: 'empty' }, 'No message yet.'))
      if (atEnd) log.scrollTop = log.scrollHeight
    } catch (err) {
      notice(err.status === 404 ? `No conversation ${id} in this workspace.` : `Could not load the conversation: ${err.message}`)
    }
  }

  if (id) thread.append(title, h('p', { class: 'hint mono' }, id), state, h('div', { class: 'actions' }, takeover, resolve), log, replyForm)
  else thread.append(h('p', { class: 'empty' }, 'Choose a conversation to read it.'))
  void loadList()
  void loadThread()
  const timer = setInterval(() => {
    if (document.hidden) return
    void loadList()
    void loadThread()
  }, REFRESH_MS)
  return () => clearInterval(timer)
}
