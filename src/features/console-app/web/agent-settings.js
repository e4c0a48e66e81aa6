// An agent's settings as the API holds them (GET /api/v1/agents/{id}): name, greeting and
// instructions; its knowledge documents; where a call can be transferred; its voice and the voice
// dials. "Save to draft" sends them as an agent PATCH: the service's own rules decide, and a
// refusal (400 naming the member) shows next to the form with the member marked and what was
// typed kept.
import { api } from './api.js'
import { announce, h, when } from './dom.js'

const VOICES = ['aria', 'kabir', 'meera', 'oliver', 'sofia', 'leo']
let uid = 0

/** A labelled control; `member` is the agent field it edits, as a refusal names it. */
function field(label, control, { member, hint } = {}) {
  const id = `f${++uid}`
  control.id = id
  if (member) control.dataset.member = member
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id)
  const check = control.type === 'checkbox'
  return h('div', { class: check ? 'field check' : 'field' }, check ? [control, h('label', { for: id }, label)] : [h('label', { for: id }, label), control], hintEl)
}
const input = (value, props = {}) => h('input', { value: value ?? '', autocomplete: 'off', ...props })
const number = (value, props) => input(value === null || value === undefined ? '' : String(value), { type: 'number', ...props })
const checkbox = (on) => h('input', { type: 'checkbox', checked: !!on })
const select = (value, options) => {
  const el = h(
    'select',
    {},
    options.map(([v, label]) => h('option', { value: v }, label)),
  )
  el.value = value
  return el
}
/** An empty number box is null (the service's default); anything else is sent as typed, for the service to judge. */
const numOrNull = (el) => (el.value.trim() === '' ? null : Number(el.value))

function transferRow(t, list) {
  const name = input(t.name, { maxlength: 60 })
  const phone = input(t.phoneNumber, { class: 'mono', inputmode: 'tel' })
  const when_ = h('textarea', { rows: 2, class: 'wide' }, t.whenToUse)
  const mode = select(t.mode ?? 'cold', [
    ['cold', 'Cold: put through, agent leaves'],
    ['warm', 'Warm: agent briefs them first'],
  ])
  const row = h(
    'fieldset',
    { class: 'transfer' },
    h('legend', {}, 'Transfer'),
    h('div', { class: 'form-grid' }, field('Name', name), field('Phone number', phone), field('Mode', mode)),
    field('When to use', when_),
    h(
      'button',
      {
        type: 'button',
        class: 'quiet',
        onclick: () => {
          row.remove()
          renumber(list)
        },
      },
      'Remove',
    ),
  )
  row.read = () => ({ name: name.value, phoneNumber: phone.value, whenToUse: when_.value, mode: mode.value })
  row.controls = { name, phoneNumber: phone, whenToUse: when_, mode }
  return row
}
/** Each row's controls carry their member (`transfers[1].phoneNumber`) and its legend its place. */
function renumber(list) {
  ;[...list.children].forEach((row, i) => {
    row.querySelector('legend').textContent = `Transfer ${i + 1}`
    for (const [k, el] of Object.entries(row.controls)) el.dataset.member = `transfers[${i}].${k}`
  })
}

export function section(agent, ctx) {
  const v = agent.voice
  const c = {
    name: input(agent.name, { maxlength: 60, class: 'wide' }),
    greeting: input(agent.greeting, { maxlength: 200, class: 'wide' }),
    instructions: h('textarea', { rows: 8, class: 'wide' }, agent.instructions),
    answersCalls: checkbox(v.answersCalls),
    voice: select(
      v.voice,
      (VOICES.includes(v.voice) ? VOICES : [v.voice, ...VOICES]).map((x) => [x, x]),
    ),
    recordCalls: checkbox(v.recordCalls),
    summariseCalls: checkbox(v.summariseCalls),
    detectMachines: checkbox(v.detectMachines),
    voicemailMessage: h('textarea', { rows: 2, class: 'wide' }, v.voicemailMessage ?? ''),
    maxCallSeconds: number(v.maxCallSeconds, { step: 1, placeholder: 'plan default' }),
    endpointingMs: number(v.endpointingMs, { step: 1, placeholder: '1500' }),
    speed: number(v.speed, { step: 0.05, placeholder: 'engine’s own' }),
    level: select(v.patience.level, [
      ['quick', 'Quick'],
      ['normal', 'Normal'],
      ['patient', 'Patient'],
    ]),
    waitMs: number(v.patience.waitMs, { step: 1, placeholder: 'the level decides' }),
    interruptible: checkbox(v.interruptions.enabled),
    minSpeechMs: number(v.interruptions.minSpeechMs, { step: 1, placeholder: '64' }),
    minWords: number(v.interruptions.minWords, { step: 1, placeholder: 'any' }),
    backchannels: h('textarea', { rows: 3, class: 'wide' }, v.interruptions.backchannels.join('\n')),
  }
  const transfers = h('div', { class: 'transfers' })
  transfers.append(...agent.transfers.map((t) => transferRow(t, transfers)))
  renumber(transfers)
  const knowledge = h('ul', { class: 'knowledge' }, h('li', { class: 'empty' }, 'Loading…'))
  const error = h('p', { class: 'error form-error', role: 'alert', hidden: true })
  const saved = h('p', { class: 'hint', role: 'status' })
  const save = h('button', { type: 'submit' }, 'Save to draft')

  const body = () => ({
    name: c.name.value,
    greeting: c.greeting.value,
    instructions: c.instructions.value,
    transfers: [...transfers.children].map((row) => row.read()),
    voice: {
      answersCalls: c.answersCalls.checked,
      voice: c.voice.value,
      recordCalls: c.recordCalls.checked,
      summariseCalls: c.summariseCalls.checked,
      detectMachines: c.detectMachines.checked,
      voicemailMessage: c.voicemailMessage.value.trim() === '' ? null : c.voicemailMessage.value,
      maxCallSeconds: numOrNull(c.maxCallSeconds),
      endpointingMs: numOrNull(c.endpointingMs),
      speed: numOrNull(c.speed),
      patience: { level: c.level.value, waitMs: numOrNull(c.waitMs) },
      interruptions: {
        enabled: c.interruptible.checked,
        minSpeechMs: numOrNull(c.minSpeechMs),
        minWords: numOrNull(c.minWords),
        backchannels: c.backchannels.value
          .split('\n')
          .map((s) => s.trim())
          .filter(Boolean),
      },
    },
  })

  /** The control a refusal names: the member itself, else the list or object it is in (`…backchannels[1]` → backchannels). */
  const controlFor = (member) => {
    for (let m = member; m; m = m.replace(/(\[\d+\]|\.[^.[]+)$/, '')) {
      const el = form.querySelector(`[data-member="${CSS.escape(m)}"]`)
      if (el) return el
      if (!/(\[\d+\]|\.[^.[]+)$/.test(m)) break
    }
    return null
  }
  const clearMarks = () => {
    for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid')
  }

  const form = h(
    'form',
    {
      class: 'agent-settings',
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault()
        save.disabled = true
        error.hidden = true
        saved.textContent = ''
        clearMarks()
        try {
          const updated = await api('PATCH', ctx.path(), body())
          saved.textContent = `Saved to the draft at ${when(new Date().toISOString())}. Publish it (Versions) to serve it.`
          announce('Saved to the draft')
          document.querySelector('main h1').textContent = updated.name
          ctx.changed()
        } catch (err) {
          // The service's words, as the API answers them; the form keeps what was typed.
          error.textContent = `Not saved: ${err.message}`
          error.hidden = false
          const el = err.body?.field ? controlFor(err.body.field) : null
          if (el) {
            el.setAttribute('aria-invalid', 'true')
            el.setAttribute('aria-errormessage', 'settings-error')
            el.focus()
          }
        }
        save.disabled = false
      },
    },
    h('h3', {}, 'Core'),
    field('Name', c.name, { member: 'name' }),
    field('Greeting', c.greeting, { member: 'greeting', hint: 'The first thing the agent says (up to 200 characters).' }),
    field('Instructions', c.instructions, { member: 'instructions' }),
    h('h3', {}, 'Knowledge'),
    knowledge,
    h('p', { class: 'hint' }, 'Documents are added and removed with POST / DELETE /api/v1/agents/{id}/knowledge; the draft links them at once.'),
    h('h3', {}, 'Transfers'),
    h('p', { class: 'hint' }, 'Where a live call can be put through to a person (up to 10). The model reads “When to use” to choose.'),
    transfers,
    h(
      'button',
      {
        type: 'button',
        class: 'quiet',
        onclick: () => {
          transfers.append(transferRow({ name: '', phoneNumber: '', whenToUse: '', mode: 'cold' }, transfers))
          renumber(transfers)
          transfers.lastElementChild.querySelector('input').focus()
        },
      },
      'Add transfer',
    ),
    h('h3', {}, 'Voice'),
    h(
      'div',
      { class: 'form-grid' },
      field('Answers calls', c.answersCalls, { member: 'voice.answersCalls' }),
      field('Record calls', c.recordCalls, { member: 'voice.recordCalls' }),
      field('Summarise calls', c.summariseCalls, { member: 'voice.summariseCalls' }),
      field('Detect answering machines', c.detectMachines, { member: 'voice.detectMachines' }),
      field('Voice', c.voice, { member: 'voice.voice' }),
      field('Longest call (s)', c.maxCallSeconds, { member: 'voice.maxCallSeconds', hint: '60–1,200; empty: the plan’s' }),
      field('End-of-turn silence (ms)', c.endpointingMs, { member: 'voice.endpointingMs', hint: '200–3,000; empty: 1,500' }),
    ),
    field('Voicemail message', c.voicemailMessage, {
      member: 'voice.voicemailMessage',
      hint: 'Left after the beep when a machine answers (with machine detection on); {{name}}, {{firstName}}, {{phone}}, {{email}}; empty: hang up.',
    }),
    h('h3', {}, 'Voice dials'),
    h(
      'div',
      { class: 'form-grid' },
      field('Speed', c.speed, { member: 'voice.speed', hint: '0.7–1.2; empty: the engine’s own rate' }),
      field('Patience', c.level, { member: 'voice.patience.level', hint: 'How long the agent waits for a caller who paused' }),
      field('Patience wait (ms)', c.waitMs, { member: 'voice.patience.waitMs', hint: '200–3,000; replaces the level; empty: the level decides' }),
      field('Caller can interrupt', c.interruptible, { member: 'voice.interruptions.enabled' }),
      field('Interrupting speech (ms)', c.minSpeechMs, { member: 'voice.interruptions.minSpeechMs', hint: '64–2,000; empty: 64' }),
      field('Interrupting words', c.minWords, { member: 'voice.interruptions.minWords', hint: '1–10; fewer and the agent resumes; empty: any' }),
    ),
    field('Backchannels', c.backchannels, { member: 'voice.interruptions.backchannels', hint: 'One a line: words that, said over the agent, are acknowledgements (it resumes).' }),
    error,
    h('div', { class: 'form-actions' }, save, saved),
  )
  error.id = 'settings-error'

  api('GET', ctx.path('/knowledge'))
    .then(({ items }) =>
      knowledge.replaceChildren(
        ...(items.length
          ? items.map((d) => h('li', {}, h('strong', {}, d.title), ` · ${d.type === 'url' ? d.source : 'pasted text'} · ${d.status}${d.error ? `: ${d.error}` : ''} · ${d.passages} passages`))
          : [h('li', { class: 'empty' }, 'No document.')]),
      ),
    )
    .catch((err) => knowledge.replaceChildren(h('li', { class: 'error' }, `Could not read the knowledge: ${err.message}`)))

  return { el: h('section', { class: 'panel agent-section', 'aria-labelledby': 'settings-title' }, h('h2', { id: 'settings-title' }, 'Settings (draft)'), form) }
}
