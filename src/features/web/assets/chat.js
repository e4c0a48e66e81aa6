/*
 * The chat (the widget's frame and the /w/{key} page): settings, the visitor session (kept in
 * localStorage), the welcome screen and its lead form, messages with the reply streamed (SSE over
 * fetch), and the call button (voice.js). Plain DOM: no framework is needed for this.
 */
;(function () {
  'use strict'
  var root = document.getElementById('chat')
  var key = root.getAttribute('data-key')
  var embedded = document.body.classList.contains('embedded')
  var api = '/api/v1/web/' + encodeURIComponent(key)
  var slot = 'agent-widget:' + key
  var CODES = { english: 'en', hindi: 'hi', tamil: 'ta', telugu: 'te', bengali: 'bn', marathi: 'mr', gujarati: 'gu', kannada: 'kn', malayalam: 'ml', punjabi: 'pa', urdu: 'ur', spanish: 'es', french: 'fr', german: 'de', portuguese: 'pt', arabic: 'ar', indonesian: 'id' }
  var state = { settings: null, session: null, busy: false, shown: {} }
  /** The team's-messages stream reconnects after 3 s, doubling to 30 s while it keeps failing. */
  var RETRY_MS = 3000, RETRY_MAX_MS = 30000
  var text = window.AgentWidgetText('en')
  var t = function (key, values) { return text.t(key, values) }

  function el(tag, attrs, text) {
    var node = document.createElement(tag)
    for (var name in attrs || {}) node.setAttribute(name, attrs[name])
    if (text !== undefined) node.textContent = text
    return node
  }
  function saved() {
    try { return localStorage.getItem(slot) } catch (e) { return null }
  }
  function save(token) {
    try { token ? localStorage.setItem(slot, token) : localStorage.removeItem(slot) } catch (e) { /* storage blocked: the session lasts the page */ }
  }
  function post(path, body) {
    return fetch(api + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  }
  function errorOf(res) {
    return res.json().then(function (b) { return b.error || 'HTTP ' + res.status }, function () { return 'HTTP ' + res.status }).then(function (msg) {
      if (res.status === 429) return t('quick', { s: res.headers.get('retry-after') || '…' })
      return msg
    })
  }

  // ---- the frame's parts ----
  var header = el('header', { class: 'bar' })
  var title = el('h1', { id: 'chat-title' })
  var actions = el('div', { class: 'actions' })
  var callButton = el('button', { type: 'button', class: 'call', hidden: '' }, t('call'))
  var closeButton = el('button', { type: 'button', class: 'close', 'aria-label': t('close') }, '×')
  actions.appendChild(callButton)
  if (embedded) actions.appendChild(closeButton)
  header.appendChild(title)
  header.appendChild(actions)
  var welcome = el('section', { class: 'welcome', hidden: '', 'aria-labelledby': 'welcome-title' })
  var log = el('ol', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-labelledby': 'chat-title' })
  var alertBox = el('p', { class: 'alert', role: 'alert', hidden: '' })
  // Hidden until the chat has its settings and a session: typed earlier, a message would go out
  // without a session, under words not yet in the agent's language.
  var composer = el('form', { class: 'composer', hidden: '' })
  var label = el('label', { for: 'message', class: 'sr-only' }, t('message'))
  var input = el('textarea', { id: 'message', rows: '1', maxlength: '4000', placeholder: t('placeholder'), autocomplete: 'off' })
  var send = el('button', { type: 'submit', class: 'send' }, t('send'))
  composer.appendChild(label)
  composer.appendChild(input)
  composer.appendChild(send)
  ;[header, welcome, log, alertBox, composer].forEach(function (n) { root.appendChild(n) })

  function showAlert(text) {
    alertBox.textContent = text
    alertBox.hidden = !text
  }
  function bubble(author, text) {
    var item = el('li', { class: 'msg ' + author })
    var who = el('span', { class: 'sr-only' }, author === 'customer' ? t('you') + ': ' : (state.settings ? state.settings.agent.name : 'Agent') + ': ')
    var body = el('span', { class: 'text' }, text)
    item.appendChild(who)
    item.appendChild(body)
    log.appendChild(item)
    log.scrollTop = log.scrollHeight
    return body
  }
  function closeChat() {
    if (embedded && window.parent !== window) window.parent.postMessage({ type: 'agent-widget:close' }, '*')
  }
  closeButton.addEventListener('click', closeChat)
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape') closeChat()
  })

  // ---- settings and session ----
  function apply(settings) {
    state.settings = settings
    document.body.classList.add('theme-' + settings.widget.theme)
    document.documentElement.style.setProperty('--accent', settings.colours.accent)
    document.documentElement.style.setProperty('--on-accent', settings.colours.onAccent)
    document.documentElement.style.setProperty('--height', settings.widget.height + 'px')
    var language = settings.agent.language.toLowerCase()
    document.documentElement.lang = CODES[language] || (language === 'auto' ? navigator.language || 'en' : 'en')
    text = window.AgentWidgetText(document.documentElement.lang)
    if (text.rtl) document.documentElement.dir = 'rtl'
    label.textContent = t('message')
    input.setAttribute('placeholder', t('placeholder'))
    send.textContent = t('send')
    closeButton.setAttribute('aria-label', t('close'))
    callButton.textContent = t('call')
    document.title = t('chatWith', { name: settings.agent.name })
    title.textContent = settings.agent.name
    callButton.setAttribute('aria-label', t('callWho', { name: settings.agent.name }))
    if (settings.call && window.AgentVoice) {
      callButton.hidden = false
      window.AgentVoice.attach({ button: callButton, api: api, session: function () { return state.session }, status: showAlert, t: t })
    }
  }

  function startSession(token) {
    return post('/sessions', token ? { session: token } : {}).then(function (res) {
      if (res.status === 401 && token) return startSession(null)
      if (!res.ok) return errorOf(res).then(function (m) { throw new Error(m) })
      return res.json()
    })
  }

  function showWelcome() {
    var s = state.settings
    welcome.hidden = false
    composer.hidden = true
    welcome.appendChild(el('h2', { id: 'welcome-title' }, s.agent.name))
    welcome.appendChild(el('p', {}, s.agent.greeting))
    var form = el('form', { class: 'lead', novalidate: '' })
    if (s.widget.welcomeCollectLeads) {
      form.appendChild(el('p', { class: 'hint' }, t('reach')))
      ;[['name', t('name'), 'text', 'name'], ['email', t('email'), 'email', 'email'], ['phone', t('phone'), 'tel', 'tel']].forEach(function (f) {
        var id = 'lead-' + f[0]
        form.appendChild(el('label', { for: id }, f[1]))
        form.appendChild(el('input', { id: id, name: f[0], type: f[2], autocomplete: f[3], maxlength: f[0] === 'email' ? '254' : '100' }))
      })
    }
    form.appendChild(el('button', { type: 'submit', class: 'start' }, t('start')))
    welcome.appendChild(form)
    form.addEventListener('submit', function (e) {
      e.preventDefault()
      if (!s.widget.welcomeCollectLeads) return begin()
      var body = { session: state.session }
      ;['name', 'email', 'phone'].forEach(function (n) {
        var v = form.elements[n].value.trim()
        if (v) body[n] = v
      })
      if (!body.name && !body.email && !body.phone) return showAlert(t('needOne'))
      post('/lead', body).then(function (res) {
        if (!res.ok) return errorOf(res).then(showAlert)
        begin()
      })
    })
  }
  function begin() {
    showAlert('')
    welcome.hidden = true
    composer.hidden = false
    bubble('agent', state.settings.agent.greeting)
    input.focus()
  }

  // ---- messages ----
  function readStream(res, onEvent) {
    var reader = res.body.getReader()
    var decoder = new TextDecoder()
    var buffer = ''
    function pump() {
      return reader.read().then(function (r) {
        if (r.done) return
        buffer += decoder.decode(r.value, { stream: true })
        var cut
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          var block = buffer.slice(0, cut)
          buffer = buffer.slice(cut + 2)
          var event = 'message', data = ''
          block.split('\n').forEach(function (line) {
            if (line.indexOf('event: ') === 0) event = line.slice(7)
            else if (line.indexOf('data: ') === 0) data += line.slice(6)
          })
          if (data) onEvent(event, JSON.parse(data))
        }
        return pump()
      })
    }
    return pump()
  }

  function sendMessage(text) {
    if (state.busy || !text.trim()) return
    state.busy = true
    send.disabled = true
    showAlert('')
    bubble('customer', text)
    input.value = ''
    var reply = null
    post('/messages', { session: state.session, message: text })
      .then(function (res) {
        if (!res.ok) return errorOf(res).then(showAlert)
        return readStream(res, function (event, data) {
          if (event === 'token') {
            if (!reply) reply = bubble('agent', '')
            reply.textContent += data.text
          } else if (event === 'reply') {
            if (!reply) reply = bubble('agent', '')
            reply.textContent = data.text
            state.shown[data.messageId] = true
          } else if (event === 'silent') bubble('note', data.reason)
          else if (event === 'unavailable') bubble('note', t('unavailable'))
          else if (event === 'error') showAlert(data.error)
          log.scrollTop = log.scrollHeight
        })
      })
      .catch(function () { showAlert(t('dropped')) })
      .then(function () {
        state.busy = false
        send.disabled = false
        input.focus()
      })
  }
  composer.addEventListener('submit', function (e) {
    e.preventDefault()
    sendMessage(input.value)
  })
  input.addEventListener('keydown', function (e) {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault()
      sendMessage(input.value)
    }
  })

  // Messages a person from the team writes arrive on a long-lived stream of their own.
  function listen(delay) {
    var next = delay
    post('/events', { session: state.session })
      .then(function (res) {
        if (!res.ok) throw new Error('HTTP ' + res.status)
        return readStream(res, function (event, data) {
          if (event === 'ready') next = RETRY_MS
          else if (event === 'message' && !state.shown[data.id]) {
            state.shown[data.id] = true
            bubble(data.author, data.text)
          }
        })
      })
      .catch(function () {})
      .then(function () {
        setTimeout(function () { listen(Math.min(next * 2, RETRY_MAX_MS)) }, next)
      })
  }

  fetch(api)
    .then(function (res) {
      if (!res.ok) return errorOf(res).then(function (m) { throw new Error(m) })
      return res.json()
    })
    .then(function (settings) {
      apply(settings)
      return startSession(saved())
    })
    .then(function (s) {
      state.session = s.session
      save(s.session)
      listen(RETRY_MS)
      if (s.messages.length) {
        s.messages.forEach(function (m) {
          state.shown[m.id] = true
          bubble(m.author, m.text)
        })
        composer.hidden = false
      } else if (state.settings.widget.welcomeScreen || state.settings.widget.welcomeCollectLeads) showWelcome()
      else begin()
    })
    .catch(function (err) {
      // The visitor is told only that the chat is unavailable; the reason is for the site's developer.
      composer.hidden = true
      showAlert(t('unavailable'))
      if (window.console) console.warn('chat unavailable:', err.message)
    })
})()
