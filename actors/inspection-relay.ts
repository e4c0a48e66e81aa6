/**
 * The inspector relay INSPECT=1 starts: a WebSocket hub the actors stream to, and a page that
 * embeds Stately's inspector (https://stately.ai/inspect) and feeds it from the hub. It speaks
 * the same protocol as `@statelyai/inspect/server` (which it replaces only to own the page): each
 * message from one socket goes to every other, and the last MAX_BUFFERED are replayed to a newcomer.
 *
 * The embedded inspector is a web app on stately.ai: offline the frame stays grey. The page says
 * so from the start, and again plainly if the inspector has not answered within
 * CONNECT_NOTICE_MS, pointing to the console app's state charts, which are served by the service
 * itself and work offline.
 */
import http from 'node:http'
import { WebSocket, WebSocketServer } from 'ws'

/** The package's own replay buffer (`maxBufferSize` in @statelyai/inspect/server). */
const MAX_BUFFERED = 200
/** The hosted inspector loads in 1–3 s on a fair connection; past 8 s it is not coming. */
const CONNECT_NOTICE_MS = 8_000
export const STATELY_INSPECTOR_URL = 'https://stately.ai/inspect'

export interface Relay {
  /** The console app's state charts, linked from the page once the service listens. */
  consoleChartsUrl: string | null
  stop(): void
}

const escaped = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

export function relayPage(wsPort: number, consoleChartsUrl: string | null): string {
  const charts = consoleChartsUrl
    ? `<a href="${escaped(consoleChartsUrl)}">the console app's state charts</a> (served by the service, no internet needed; they need the console token)`
    : "the console app's state charts (<code>/console/app#/charts</code> on the service), which work offline"
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Actor inspector (Stately)</title>
  <style>
    * { margin: 0; padding: 0; box-sizing: border-box; }
    html, body { height: 100%; font: 14px/1.4 system-ui, sans-serif; }
    body { display: flex; flex-direction: column; }
    #needs { padding: 6px 12px; background: #fff8e1; border-bottom: 1px solid #e0c97a; color: #4a3b00; }
    #offline { display: none; padding: 24px; color: #222; }
    #offline.shown { display: block; }
    iframe { flex: 1; width: 100%; border: none; }
  </style>
</head>
<body>
  <p id="needs">This page embeds Stately's inspector from ${STATELY_INSPECTOR_URL} and needs the internet. Without it, use ${charts}.</p>
  <div id="offline" role="alert"><h1>The inspector has not loaded</h1><p>Stately's inspector (${STATELY_INSPECTOR_URL}) did not answer: this machine may be offline. The actors' events still reach this page's relay. To watch live actors without the internet, open ${charts}.</p></div>
  <iframe id="inspector" title="Stately inspector" src="${STATELY_INSPECTOR_URL}"></iframe>
  <script>
    const iframe = document.getElementById('inspector');
    const buffer = [];
    let connected = false;
    setTimeout(() => { if (!connected) document.getElementById('offline').classList.add('shown'); }, ${CONNECT_NOTICE_MS});
    window.addEventListener('message', (e) => {
      if (e.data && e.data.type === '@statelyai.connected') {
        connected = true;
        document.getElementById('offline').classList.remove('shown');
        for (const event of buffer) iframe.contentWindow.postMessage(event, '*');
        buffer.length = 0;
      }
    });
    const ws = new WebSocket('ws://' + location.hostname + ':${wsPort}');
    ws.onmessage = (event) => {
      const data = JSON.parse(event.data);
      if (connected) iframe.contentWindow.postMessage(data, '*');
      else buffer.push(data);
    };
  </script>
</body>
</html>`
}

/** Starts the relay on `port`, every interface (as the package's relay: the documented behaviour). */
export function startRelay(port: number): Relay {
  const relay: Relay = {
    consoleChartsUrl: null,
    stop() {
      wss.close()
      server.close()
    },
  }
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(relayPage(port, relay.consoleChartsUrl))
  })
  const wss = new WebSocketServer({ server })
  const buffered: string[] = []
  wss.on('connection', (ws) => {
    for (const m of buffered) ws.send(m)
    ws.on('message', (data) => {
      const m = data.toString()
      buffered.push(m)
      if (buffered.length > MAX_BUFFERED) buffered.shift()
      for (const client of wss.clients) if (client !== ws && client.readyState === WebSocket.OPEN) client.send(m)
    })
  })
  server.listen(port)
  return relay
}
