/**
 * The console's Quality page read: a workspace's call quality over the last 24 hours or 7 days
 * (answer time, interruptions, suspected cut-offs, transfers), overall and per hour or day, each
 * bucket's instants naming the calls behind it (the calls list's `since` and `until`).
 */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import type { CallReads, QualityWindow } from '../calls/public'

const Num = t.Union([t.Number(), t.Null()])
const Figures = {
  calls: t.Integer({ description: 'calls with a voice pipeline (a media stream) the figures are about' }),
  turns: t.Integer({ description: 'agent turns answered after the caller spoke' }),
  answerMs: t.Union([t.Object({ p50: t.Number(), p95: t.Number() }), t.Null()], {
    description: "end of the caller's speech → the caller heard the answer (first audio sent where the line echoes no marks), ms, over every turn; null without a turn",
  }),
  interruptions: t.Integer({ description: 'speech over the agent that stopped it and took the turn' }),
  interruptionsPerCall: Num,
  cutOffs: t.Integer({ description: 'suspected cut-offs: pauses the agent talked into (the caller went on within 1 s of its answer)' }),
  cutOffsPerCall: Num,
  transfers: t.Object(
    {
      total: t.Integer(),
      answered: t.Integer(),
      no_answer: t.Integer(),
      busy: t.Integer(),
      declined: t.Integer(),
      failed: t.Integer(),
      pending: t.Integer({ description: 'not over yet' }),
    },
    { description: 'transfers of the calls, by how they ended' },
  ),
}
const Refused = t.Object(
  {
    total: t.Integer(),
    outbound: t.Integer({ description: 'placed by the API (503), or a waiting call that gave up' }),
    inbound: t.Integer({ description: 'rang one of its numbers and heard busy' }),
    web: t.Integer({ description: "a browser's call (the widget's call button, 503)" }),
    calls: t.Array(t.String(), { description: 'ids of the refused calls that have a call record (waiting calls that gave up), up to 20 per hour and instance' }),
  },
  { description: 'calls refused at capacity (no room on an instance), every instance counted; the last 10 s of an instance that crashed may be missing' },
)
const Quality = t.Object({
  window: t.Union([t.Literal('24h'), t.Literal('7d')]),
  grain: t.Union([t.Literal('hour'), t.Literal('day')]),
  since: t.String({ description: 'the window opens (a whole hour or UTC day)' }),
  until: t.String(),
  truncated: t.Boolean({ description: 'more calls than are read at once: the figures cover the newest' }),
  overall: t.Object({ ...Figures, refused: Refused }),
  buckets: t.Array(t.Object({ since: t.String(), until: t.String(), ...Figures, refused: Refused }), { description: 'per hour (24h) or UTC day (7d), oldest first' }),
})

export function consoleQualityReads(d: { auth: KernelHttp['console']; calls: Pick<CallReads, 'quality'> }) {
  return new Elysia({ detail: { tags: ['Console'] } }).use(d.auth).get(
    '/workspaces/:ws/quality',
    ({ query, workspace }) => d.calls.quality(workspace.id, (query.window ?? '24h') as QualityWindow), // cast: the schema admits only the two windows
    {
      params: t.Object({ ws: t.String() }),
      workspace: true,
      query: t.Object({ window: t.Optional(t.Union([t.Literal('24h'), t.Literal('7d')], { description: '24h (default, hourly) or 7d (daily)' })) }),
      detail: {
        summary:
          "A workspace's call quality over the last 24 h or 7 d: answer time p50/p95, interruptions and suspected cut-offs per call, transfers by outcome; real calls only; and the calls refused at capacity",
        responses: answers({ 200: Quality, ...consoleErrors(400, 404) }),
      },
    },
  )
}
