/*
 * The website widget's loader. A site embeds it with
 *   <script src="{PUBLIC_BASE_URL}/widget.js" data-key="wk_…" async></script>
 * It adds a launcher button (in a shadow root, so the site's CSS cannot reach it) and opens the
 * chat in an iframe served by us (/w/{key}?embed=1): the chat runs isolated from the page.
 */
;(function () {
  'use strict'
  var script = document.currentScript || document.querySelector('script[data-key][src*="/widget.js"]')
  if (!script) return
  var key = script.getAttribute('data-key')
  var loaded = (window.__agentWidgets = window.__agentWidgets || {})
  if (!key || loaded[key]) return
  loaded[key] = true
  var base = new URL(script.src, location.href).origin

  fetch(base + '/api/v1/web/' + encodeURIComponent(key))
    .then(function (r) {
      return r.json().then(function (body) {
        if (!r.ok) throw new Error(body.error || 'HTTP ' + r.status)
        return body
      })
    })
    .then(mount)
    .catch(function (err) {
      console.warn('chat widget ' + key + ': ' + err.message)
    })

  function mount(settings) {
    var accent = settings.colours.accent
    var height = settings.widget.height
    var host = document.createElement('div')
    host.setAttribute('data-agent-widget', key)
    var root = host.attachShadow({ mode: 'open' })
    var style = document.createElement('style')
    style.textContent =
      ':host{all:initial}' +
      '.launcher{position:fixed;right:20px;bottom:20px;z-index:2147483646;width:60px;height:60px;border-radius:50%;border:0;cursor:pointer;' +
      'background:' + accent + ';color:' + settings.colours.onAccent + ';box-shadow:0 4px 16px rgba(0,0,0,.25);display:flex;align-items:center;justify-content:center}' +
      '.launcher:focus-visible{outline:3px solid #111;outline-offset:3px}' +
      '.launcher svg{width:28px;height:28px;fill:currentColor}' +
      '.panel{position:fixed;right:20px;bottom:92px;z-index:2147483647;width:380px;max-width:calc(100vw - 40px);height:' + height + 'px;max-height:calc(100vh - 112px);' +
      'border-radius:' + (settings.widget.theme === 'classic' ? '6px' : '16px') + ';overflow:hidden;box-shadow:0 8px 32px rgba(0,0,0,.3);background:#fff}' +
      '.panel[hidden]{display:none}' +
      '.panel iframe{border:0;width:100%;height:100%;display:block}' +
      '@media (max-width:480px){.panel{right:0;bottom:0;width:100vw;max-width:100vw;height:100%;max-height:100%;border-radius:0}}'
    var button = document.createElement('button')
    button.className = 'launcher'
    button.type = 'button'
    button.setAttribute('aria-label', 'Open chat with ' + settings.agent.name)
    button.setAttribute('aria-expanded', 'false')
    button.innerHTML = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z"/></svg>'
    var panel = document.createElement('div')
    panel.className = 'panel'
    panel.hidden = true
    var frame = null
    root.appendChild(style)
    root.appendChild(panel)
    root.appendChild(button)
    // An async script may run before the page's body exists.
    if (document.body) document.body.appendChild(host)
    else document.addEventListener('DOMContentLoaded', function () { document.body.appendChild(host) })

    function open() {
      if (!frame) {
        frame = document.createElement('iframe')
        frame.src = base + '/w/' + encodeURIComponent(key) + '?embed=1'
        frame.title = 'Chat with ' + settings.agent.name
        frame.allow = 'microphone; autoplay'
        panel.appendChild(frame)
      }
      panel.hidden = false
      button.setAttribute('aria-expanded', 'true')
      button.setAttribute('aria-label', 'Close chat with ' + settings.agent.name)
      frame.focus()
    }
    function close() {
      panel.hidden = true
      button.setAttribute('aria-expanded', 'false')
      button.setAttribute('aria-label', 'Open chat with ' + settings.agent.name)
      button.focus()
    }
    button.addEventListener('click', function () {
      panel.hidden ? open() : close()
    })
    // The chat asks to close (its close button, or Escape inside it); only our frame may.
    window.addEventListener('message', function (e) {
      if (e.origin === base && frame && e.source === frame.contentWindow && e.data && e.data.type === 'agent-widget:close') close()
    })
  }
})()
