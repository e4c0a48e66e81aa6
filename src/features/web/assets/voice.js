/*
 * The widget's call button: a voice call to the agent. WebRTC first (Opus, the browser's own
 * jitter buffer, ICE): the offer goes to `{mediaPath}/webrtc` and a `control` data channel says
 * `stop` on hang-up. Where WebRTC is missing or does not connect within 10 s, the media bridge's
 * WebSocket in the Twilio Media Streams protocol with 16-bit PCM (`audio/l16`): 20 ms frames go
 * up, the agent's audio plays through the jitter buffer in pcm-worklet.js, marks are echoed once
 * heard, and `clear` (the caller spoke over the agent) stops playback at once. The microphone is
 * asked for with echo cancellation and noise suppression. `?transport=websocket` on the page
 * forces the socket. `AgentVoice.stats` counts what happened (tests read it).
 */
;(function () {
  'use strict'
  var RATE = 16000 // a rate the bridge takes (8, 16, 24, 44.1, 48 kHz); speech engines want 16 kHz
  /** WebRTC gets 10 s to connect (ICE checks on a normal network take well under 2 s) before the socket is used instead. */
  var WEBRTC_CONNECT_MS = 10000
  var stats = { state: 'idle', transport: null, callId: null, framesSent: 0, framesReceived: 0, samplesPlayed: 0, clears: 0, marksEchoed: 0 }
  var forced = new URLSearchParams(location.search).get('transport')
  var call = null

  function b64(int16) {
    var bytes = new Uint8Array(int16.buffer, int16.byteOffset, int16.byteLength) // little-endian on every browser platform
    var s = ''
    for (var i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000))
    return btoa(s)
  }
  function samples(payload) {
    var raw = atob(payload)
    var out = new Float32Array(raw.length >> 1)
    for (var i = 0; i < out.length; i++) {
      var v = raw.charCodeAt(2 * i) | (raw.charCodeAt(2 * i + 1) << 8)
      out[i] = (v >= 0x8000 ? v - 0x10000 : v) / 0x8000
    }
    return out
  }

  function attach(o) {
    function setButton(active) {
      o.button.setAttribute('aria-pressed', active ? 'true' : 'false')
      o.button.textContent = active ? o.t('hangUp') : o.t('call')
    }
    setButton(false)
    o.button.addEventListener('click', function () {
      if (call) return hangUp('')
      start().catch(function (err) {
        hangUp(o.t('noStart') + ' ' + err.message)
      })
    })

    function hangUp(message) {
      var c = call
      call = null
      setButton(false)
      stats.state = 'ended'
      o.status(message)
      if (!c) return
      if (c.poll) clearInterval(c.poll)
      if (c.control && c.control.readyState === 'open') c.control.send('stop')
      if (c.pc) setTimeout(function () { c.pc.close() }, 100) // lets `stop` leave first
      if (c.audio) c.audio.srcObject = null
      if (c.ws && c.ws.readyState === 1) {
        c.ws.send(JSON.stringify({ event: 'stop', streamSid: c.sid, stop: { callSid: c.id } }))
        c.ws.close(1000)
      }
      if (c.stream) c.stream.getTracks().forEach(function (t) { t.stop() })
      if (c.ctx) c.ctx.close()
    }

    function start() {
      call = { id: null, sid: 'MZ' + Math.random().toString(16).slice(2, 18), chunk: 0 }
      var c = call
      setButton(true)
      stats.state = 'connecting'
      o.status('')
      return fetch(o.api + '/calls', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session: o.session() }) })
        .then(function (res) {
          return res.json().then(function (body) {
            // At capacity (503): the visitor is told the lines are busy and when to try again.
            if (res.status === 503) throw new Error(o.t('busy', { s: res.headers.get('retry-after') || '5' }))
            if (!res.ok) throw new Error(body.error || 'HTTP ' + res.status)
            return body
          })
        })
        .then(function (answer) {
          c.id = answer.callId
          stats.callId = answer.callId
          return navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 } }).then(function (stream) {
            c.stream = stream
            if (forced !== 'websocket' && window.RTCPeerConnection) {
              return viaWebRtc(c, answer).catch(function () {
                if (c.pc) c.pc.close()
                c.pc = null
                return call === c ? viaSocket(c, answer) : null
              })
            }
            return viaSocket(c, answer)
          })
        })
    }

    function live(transport) {
      stats.state = 'live'
      stats.transport = transport
      o.status(o.t('connected'))
    }

    function viaWebRtc(c, answer) {
      var pc = new RTCPeerConnection()
      c.pc = pc
      c.stream.getTracks().forEach(function (t) { pc.addTrack(t, c.stream) })
      c.control = pc.createDataChannel('control')
      pc.ontrack = function (e) {
        c.audio = new Audio()
        c.audio.srcObject = e.streams[0] || new MediaStream([e.track])
        c.audio.play().catch(function () {})
      }
      return pc.createOffer()
        .then(function (offer) { return pc.setLocalDescription(offer) })
        .then(function () {
          return new Promise(function (done) {
            if (pc.iceGatheringState === 'complete') return done()
            pc.addEventListener('icegatheringstatechange', function () { if (pc.iceGatheringState === 'complete') done() })
          })
        })
        .then(function () { return fetch(answer.mediaPath + '/webrtc', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sdp: pc.localDescription.sdp }) }) })
        .then(function (res) {
          if (!res.ok) throw new Error('HTTP ' + res.status)
          return res.json()
        })
        .then(function (remote) { return pc.setRemoteDescription({ type: 'answer', sdp: remote.sdp }) })
        .then(function () {
          return new Promise(function (done, fail) {
            var timer = setTimeout(function () { fail(new Error('WebRTC did not connect')) }, WEBRTC_CONNECT_MS)
            var check = function () {
              if (pc.connectionState === 'connected') { clearTimeout(timer); done() }
              else if (pc.connectionState === 'failed') { clearTimeout(timer); fail(new Error('WebRTC failed')) }
            }
            pc.addEventListener('connectionstatechange', check)
            check()
          })
        })
        .then(function () {
          live('webrtc')
          pc.addEventListener('connectionstatechange', function () {
            if ((pc.connectionState === 'failed' || pc.connectionState === 'closed') && call === c) hangUp(o.t('ended'))
          })
          c.control.onclose = function () { if (call === c) hangUp(o.t('ended')) }
          // The browser's own counters: packets each way, samples played out.
          c.poll = setInterval(function () {
            pc.getStats().then(function (report) {
              report.forEach(function (r) {
                if (r.type === 'inbound-rtp' && r.kind === 'audio') {
                  stats.framesReceived = r.packetsReceived || 0
                  stats.samplesPlayed = r.totalSamplesReceived || 0
                } else if (r.type === 'outbound-rtp' && r.kind === 'audio') stats.framesSent = r.packetsSent || 0
              })
            })
          }, 250)
        })
    }

    function viaSocket(c, answer) {
      c.ctx = new AudioContext({ sampleRate: RATE })
      return c.ctx.audioWorklet.addModule('/web/pcm-worklet.js').then(function () {
          if (call !== c) return
          var ctx = c.ctx
          var mic = new AudioWorkletNode(ctx, 'mic-capture')
          var player = new AudioWorkletNode(ctx, 'agent-player', { numberOfInputs: 0, outputChannelCount: [1] })
          var mute = ctx.createGain()
          mute.gain.value = 0
          ctx.createMediaStreamSource(c.stream).connect(mic)
          mic.connect(mute).connect(ctx.destination) // pulled by the graph; the caller does not hear themselves
          player.connect(ctx.destination)
          var ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + answer.mediaPath)
          c.ws = ws
          ws.onopen = function () {
            ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }))
            ws.send(JSON.stringify({ event: 'start', sequenceNumber: '1', streamSid: c.sid, start: { streamSid: c.sid, callSid: c.id, tracks: ['inbound'], customParameters: {}, mediaFormat: { encoding: 'audio/l16', sampleRate: ctx.sampleRate, channels: 1 } } }))
            live('websocket')
            mic.port.onmessage = function (e) {
              if (ws.readyState !== 1) return
              var n = c.chunk++
              ws.send(JSON.stringify({ event: 'media', streamSid: c.sid, media: { track: 'inbound', chunk: String(n), timestamp: String(n * 20), payload: b64(e.data) } }))
              stats.framesSent++
            }
          }
          ws.onmessage = function (e) {
            var m = JSON.parse(e.data)
            if (m.event === 'media') {
              var s = samples(m.media.payload)
              player.port.postMessage({ type: 'audio', samples: s }, [s.buffer])
              stats.framesReceived++
            } else if (m.event === 'mark') player.port.postMessage({ type: 'mark', name: m.mark.name })
            else if (m.event === 'clear') {
              player.port.postMessage({ type: 'clear' })
              stats.clears++
            }
          }
          player.port.onmessage = function (e) {
            if (e.data.type === 'played') stats.samplesPlayed += e.data.samples
            else if (e.data.type === 'mark' && ws.readyState === 1) {
              ws.send(JSON.stringify({ event: 'mark', streamSid: c.sid, mark: { name: e.data.name } }))
              stats.marksEchoed++
            }
          }
          ws.onclose = function () {
            if (call === c) hangUp(o.t('ended'))
          }
        })
    }
  }

  window.AgentVoice = { attach: attach, stats: stats }
})()
