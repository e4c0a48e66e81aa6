// One call: its transcript with speaker and time, the recording with its waveform, the latency of
// each turn, the summary and extracted fields, and the call's events and webhook deliveries.
// It follows the stream while the call is live (status, transcript, latency, recording).
import { api, ws } from './api.js'
import { badge, callSeconds, callTitle, clock, duration, h, LIVE, notice, when } from './dom.js'
import { latencyChart } from './latency.js'
import { turnEvents } from './turn-events.js'
import { readWav, waveform } from './waveform.js'

export function mount(root, { workspace, id, live, link }) {
  const heading = h('h1', {}, 'Call')
  const facts = h('dl', { class: 'facts' })
  const end = h('button', { type: 'button', class: 'danger', hidden: true }, 'End call')
  // Transfer: put the live caller through to one of the agent's transfers (POST …/transfer).
  const transferTo = h('select', { id: 'transfer-to' })
  const transferButton = h('button', { type: 'button', class: 'transfer' }, 'Transfer')
  const transferBox = h('span', { class: 'transfer-box', hidden: true }, h('label', { for: 'transfer-to' }, 'Transfer to'), ' ', transferTo, ' ', transferButton)
  let destinations = null
  // A recorded call that is over can become a test: a scenario whose caller replays it (docs/api/simulations.md).
  const makeTest = h('button', { type: 'button', class: 'make-test', hidden: true }, 'Make a test from this call')
  const madeTest = h('span', { class: 'made-test' })
  const chart = h('a', { href: link(workspace, 'charts', null, { machine: 'call', actor: `call:${id}` }) }, 'State chart of this call')
  const transcript = h('ol', { class: 'transcript full', 'aria-label': 'Transcript' })
  const recording = h('div', { class: 'recording' })
  const latency = h('div')
  const events = h('div')
  const results = h('div')
  const activity = h('div')
  const section = (title, idName, ...content) => h('section', { class: 'panel', 'aria-labelledby': idName }, h('h2', { id: idName }, title), ...content)
  root.append(
    h('p', { class: 'crumbs' }, h('a', { href: link(workspace, 'calls') }, 'Calls'), ' / ', id),
    heading,
    h('div', { class: 'actions' }, end, transferBox, makeTest, madeTest, chart),
    facts,
    h(
      'div',
      { class: 'columns' },
      h('div', {}, section('Transcript', 't-title', transcript), section('Recording', 'r-title', recording)),
      h('div', {}, section('Latency per turn', 'l-title', latency), section('Turn events', 'e-title', events), section('Summary and fields', 's-title', results)),
    ),
    section('Events and webhook deliveries', 'a-title', activity),
  )

  let call = null
  // A connected call's length counts up on the service's clock, once a second like a clock's seconds.
  const lengthEl = h('span', { class: 'length' })
  const showLength = () => {
    if (call) lengthEl.textContent = duration(callSeconds(call, live.now()))
  }
  const lengthTimer = setInterval(() => call?.status === 'connected' && showLength(), 1000)
  let shownRecording = null
  let stopWave = () => {}

  end.addEventListener('click', async () => {
    end.disabled = true
    try {
      paint(await api('DELETE', ws(workspace, `/calls/${encodeURIComponent(id)}`)))
    } catch (err) {
      notice(`Could not end the call: ${err.message}`)
    }
    end.disabled = false
  })

  makeTest.addEventListener('click', async () => {
    makeTest.disabled = true
    try {
      const scenario = await api('POST', ws(workspace, '/simulations/scenarios'), { fromCall: id })
      madeTest.textContent = `Scenario ${scenario.id} made: ${scenario.caller.lines.length} caller turns replayed. Add it to a suite to run it.`
    } catch (err) {
      notice(`Could not make a test from this call: ${err.message}`)
      makeTest.disabled = false
    }
  })

  transferButton.addEventListener('click', async () => {
    transferButton.disabled = true
    try {
      paint(await api('POST', ws(workspace, `/calls/${encodeURIComponent(id)}/transfer`), { destination: transferTo.value }))
    } catch (err) {
      notice(`Could not transfer the call: ${err.message}`)
      if (err.body?.call) paint({ ...call, ...err.body.call })
    }
    transferButton.disabled = false
  })

  /** The agent's transfers, read once the call is live (the choice does not change during a call). */
  async function loadDestinations() {
    if (destinations) return
    destinations = []
    try {
      destinations = (await api('GET', ws(workspace, `/calls/${encodeURIComponent(id)}/transfers`))).items
    } catch {
      destinations = []
    }
    transferTo.replaceChildren(...destinations.map((d) => h('option', { value: d.name }, `${d.name} (${d.phoneNumber}, ${d.mode})`)))
    if (call) paint(call)
  }

  const transferWords = (t) =>
    `${t.to} (${t.phoneNumber}), by ${t.by}: ${t.outcome === null ? (t.answeredAt ? 'talking' : 'ringing') : t.outcome === 'answered' ? `answered, ${duration(t.seconds)}` : t.outcome.replace('_', ' ')}${t.error ? ` — ${t.error}` : ''}`

  const fact = (term, value) => [h('dt', {}, term), h('dd', {}, value)]
  // The speed, patience and interruption rules the call ran with (its version's voice dials).
  const dialsWords = ({ speed, patience, interruptions: i }) =>
    [
      `speed ${speed ?? 'engine default'}`,
      `patience ${patience.waitMs == null ? patience.level : `at least ${patience.waitMs} ms`}`,
      `interruptions ${
        i.enabled
          ? [
              i.minSpeechMs == null ? null : `after ${i.minSpeechMs} ms`,
              i.minWords == null ? null : `${i.minWords}+ words`,
              i.backchannels.length ? `also heard as backchannels: ${i.backchannels.join(', ')}` : null,
            ]
              .filter(Boolean)
              .join(', ') || 'on'
          : 'off'
      }`,
    ].join(' · ')
  function paint(next) {
    const ended = call && LIVE.has(call.status) && !LIVE.has(next.status)
    const analysed = call && !call.analysedAt && next.analysedAt
    call = next
    heading.textContent = callTitle(call)
    end.hidden = !LIVE.has(call.status)
    makeTest.hidden = LIVE.has(call.status) || !call.recording?.ready
    // A transfer under way or done is not asked again; one the network refused can be.
    const transferable = call.status === 'connected' && (!call.transfer || call.transfer.outcome === 'failed')
    if (transferable) void loadDestinations()
    transferBox.hidden = !(transferable && destinations?.length)
    facts.replaceChildren(
      ...fact('Status', badge('status', call.status)),
      ...fact('Agent', call.agent?.name ?? ''),
      ...fact('Version', call.agentVersion == null ? '—' : `v${call.agentVersion}`),
      ...(call.simulation
        ? fact(
            'Simulated',
            h('a', { href: link(workspace, 'simulation', call.simulation.runId) }, `by a simulation run, against ${call.simulation.target === 'draft' ? 'the draft' : `v${call.simulation.target}`}`),
          )
        : []),
      ...(call.pipeline?.dials ? fact('Voice dials', dialsWords(call.pipeline.dials)) : []),
      ...fact('Started', when(call.startedAt)),
      ...fact('Answered', when(call.answeredAt)),
      ...fact('Ended', when(call.endedAt)),
      ...fact('Length', lengthEl),
      ...fact('Hang-up', call.hangup ?? '—'),
      ...(call.transfer ? fact('Transfer', transferWords(call.transfer)) : []),
      ...(call.error ? fact('Error', call.error) : []),
    )
    showLength()
    transcript.replaceChildren(
      ...(call.transcript.length ? call.transcript : []).map((line) =>
        h(
          'li',
          { class: `line ${line.speaker}` },
          h('span', { class: 'speaker' }, line.speaker === 'agent' ? 'Agent' : line.speaker === 'customer' ? 'Caller' : 'Team'),
          h('time', { datetime: line.at }, clock(line.at)),
          h('span', { class: 'text' }, line.text),
        ),
      ),
    )
    if (!call.transcript.length) transcript.append(h('li', { class: 'empty' }, 'Nothing said yet.'))
    latency.replaceChildren(latencyChart(call.latencyTurns ?? []))
    events.replaceChildren(turnEvents(call))
    const fields = Object.entries(call.fields ?? {})
    results.replaceChildren(
      h('h3', {}, 'Summary'),
      h('p', { class: 'summary' }, call.summary ?? (call.analysedAt ? 'No summary.' : 'Written after the call.')),
      h('h3', {}, 'Extracted fields'),
      fields.length
        ? h(
            'dl',
            { class: 'facts fields' },
            fields.flatMap(([k, v]) => fact(k, String(v))),
          )
        : h('p', { class: 'empty' }, call.analysedAt ? 'No field extracted.' : 'Extracted after the call.'),
    )
    const rec = call.recording?.ready ? call.recording.url : null
    if (rec !== shownRecording) {
      shownRecording = rec
      void showRecording(rec)
    } else if (!rec) recording.replaceChildren(h('p', { class: 'empty' }, call.recording ? 'The recording is written when the call ends.' : 'This call is not recorded.'))
    if (ended || analysed || activity.childElementCount === 0) void loadActivity()
  }

  async function showRecording(url) {
    stopWave()
    if (!url) return recording.replaceChildren(h('p', { class: 'empty' }, call.recording ? 'The recording is written when the call ends.' : 'This call is not recorded.'))
    recording.replaceChildren(h('p', {}, 'Loading the recording…'))
    try {
      // Same origin whatever PUBLIC_BASE_URL says: the signed path is what matters.
      const parsed = new URL(url, location.href)
      const res = await fetch(parsed.pathname + parsed.search)
      if (!res.ok) throw new Error(`${res.status}`)
      const buffer = await res.arrayBuffer()
      const wav = readWav(buffer)
      const audio = h('audio', { controls: true, preload: 'metadata', src: URL.createObjectURL(new Blob([buffer], { type: 'audio/wav' })), 'aria-label': 'Recording of the call' })
      const canvas = h('canvas', { class: 'waveform', role: 'img', 'aria-label': wav ? `Waveform of the recording, ${duration(wav.seconds)} long; click to play from there` : 'Waveform unavailable' })
      recording.replaceChildren(canvas, audio, h('p', {}, h('a', { href: audio.src, download: `${id}.wav` }, 'Download the WAV')))
      if (wav) stopWave = waveform(canvas, audio, wav)
    } catch (err) {
      recording.replaceChildren(h('p', { class: 'error' }, `Could not load the recording (${err.message}).`))
    }
  }

  async function loadActivity() {
    try {
      const { events, deliveries } = await api('GET', ws(workspace, `/calls/${encodeURIComponent(id)}/activity`))
      activity.replaceChildren(
        events.length
          ? h(
              'table',
              { class: 'list compact' },
              h('caption', {}, 'Events'),
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Time', 'Event', 'Id'].map((c) => h('th', { scope: 'col' }, c)),
                ),
              ),
              h(
                'tbody',
                {},
                events.map((e) => h('tr', {}, h('td', {}, when(e.createdAt)), h('td', {}, e.type), h('td', { class: 'mono' }, e.id))),
              ),
            )
          : h('p', { class: 'empty' }, 'No event yet (call.completed and call.analysed come when the call ends).'),
        deliveries.length
          ? h(
              'table',
              { class: 'list compact' },
              h('caption', {}, 'Webhook deliveries'),
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Endpoint', 'Event', 'Status', 'Response', 'Attempts'].map((c) => h('th', { scope: 'col' }, c)),
                ),
              ),
              h(
                'tbody',
                {},
                deliveries.map((d) =>
                  h(
                    'tr',
                    {},
                    h('td', { class: 'mono' }, d.endpoint.url),
                    h('td', {}, d.event_type),
                    h('td', {}, badge('delivery', d.status)),
                    h('td', {}, d.response_status ?? d.error_message ?? '—'),
                    h('td', {}, String(d.attempts)),
                  ),
                ),
              ),
            )
          : h('p', { class: 'empty' }, 'No webhook delivery recorded for this call.'),
      )
    } catch (err) {
      activity.replaceChildren(h('p', { class: 'error' }, `Could not load the events: ${err.message}`))
    }
  }

  const load = () =>
    api('GET', ws(workspace, `/calls/${encodeURIComponent(id)}`))
      .then(paint)
      .catch((err) => notice(err.status === 404 ? `No call ${id} in this workspace.` : `Could not load the call: ${err.message}`))
  const offs = [live.on('call', ({ call: next }) => next.id === id && next.attempt >= (call?.attempt ?? 0) && paint(next)), live.on('state', (state) => state === 'live' && call && load())]
  void load()
  return () => {
    clearInterval(lengthTimer)
    stopWave()
    for (const off of offs) off()
  }
}
