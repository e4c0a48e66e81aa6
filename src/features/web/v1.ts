/**
 * The visitor API (`/api/v1/web/{webKey}/…`): public routes a web page calls, so no API key —
 * the widget key names the agent and a signed visitor session names the visitor. CORS is open to
 * every origin (the widget runs on the customer's site); no cookies are used, so `*` is safe.
 */
import { Elysia } from 'elysia'
import { answers, v1Errors } from '../../http/docs'
import { isVisitorPath, pathOf } from '../../http/surface'
import type { Logger } from '../../logger'
import { widgetColours } from './colours'
import { CallAnswer, LeadAnswer, SendMessage, SessionAnswer, SessionOnly, StartSession, WebKeyParams, WelcomeForm, WidgetSettings } from './model'
import type { WebChat } from './service'
import { visitorThread } from './sessions'
import { eventStream, replyStream } from './sse'
import { presentWebMessage, type TeammateMessages } from './teammates'

export const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'content-type',
  'access-control-expose-headers': 'x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, retry-after',
  // A day: browsers cap it lower anyway (Chromium at 2 h), and the answer never changes.
  'access-control-max-age': '86400',
}

const SSE_DOC = {
  description:
    'the reply as Server-Sent Events: `accepted` {conversationId, messageId}, `token` {text} per piece as the model writes, then `reply` {messageId, text}; or `silent` {reason} when a teammate has the conversation; `unavailable` {reason: this chat is not available right now} when the account cannot pay for a reply (the message is kept and the conversation escalated for the team); `error` {error, status} when the model failed mid-turn',
  content: { 'text/event-stream': { schema: { type: 'string' as const } } },
}

/** `server`: the listening server, for the visitor's address (kernel.listening: not Elysia's context). */
export function webV1(deps: { web: WebChat; teammates: TeammateMessages; logger: Logger; server: () => Bun.Server<unknown> | null }) {
  const { web } = deps
  return new Elysia({ prefix: '/web', detail: { tags: ['Website chat'] } })
    .onRequest(({ request, set }) => {
      // Global hook (the router has not run yet): only the visitor paths get CORS, errors included;
      // their preflight is answered here (no API route is an OPTIONS route). This runs for every
      // request of every route, hence pathOf rather than a parsed URL.
      if (!isVisitorPath(pathOf(request))) return
      if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: CORS })
      Object.assign(set.headers, CORS)
    })
    .get(
      '/:webKey',
      async ({ params }) => {
        const { agent } = await web.widget(params.webKey)
        const { theme, accent, height, welcomeScreen, welcomeCollectLeads } = agent.widget
        return {
          agent: { name: agent.name, greeting: agent.greeting, language: agent.language },
          widget: { theme, accent, height, welcomeScreen, welcomeCollectLeads },
          colours: widgetColours(agent.widget),
          // The `web` voice surface is the widget being on (checked above); the agent must also take calls.
          call: agent.voice.answersCalls,
        }
      },
      {
        params: WebKeyParams,
        detail: {
          summary: 'The widget’s settings (public)',
          description: 'What the widget shows: the published agent’s name, greeting, language and widget settings. 404 unknown key; 409 website chat switched off or the agent not published.',
          responses: answers({ 200: WidgetSettings, ...v1Errors(409) }),
        },
      },
    )
    .post(
      '/:webKey/sessions',
      async ({ params, body, set, request }) => {
        const client = deps.server()?.requestIP(request)?.address ?? 'unknown'
        const s = await web.session(params.webKey, body.session, set.headers as Record<string, unknown>, client)
        set.status = s.resumed ? 200 : 201
        return { ...s, messages: s.messages.map(presentWebMessage) }
      },
      {
        params: WebKeyParams,
        body: StartSession,
        detail: {
          summary: 'Start a visitor session, or resume one (public)',
          description:
            'Without `session`: a new visitor (201). With one: the same visitor and the conversation so far (200). 401 when the session is not one of this widget. 429 past 30 new sessions a minute from one address (VISITOR_SESSIONS_PER_MINUTE) or 1,000 a minute on the widget.',
          responses: answers({ 200: SessionAnswer, 201: SessionAnswer, ...v1Errors(409, 429) }),
        },
      },
    )
    .post(
      '/:webKey/messages',
      async ({ params, body, set }) => {
        const headers = set.headers as Record<string, string>
        const visitor = await web.visitor(params.webKey, body.session)
        const accepted = await web.send(visitor, params.webKey, body.message, headers)
        return replyStream(accepted, { ...headers, ...CORS }, deps.logger)
      },
      {
        params: WebKeyParams,
        body: SendMessage,
        detail: {
          summary: 'Send the visitor’s message; the reply streams back (public)',
          description:
            'Runs the published agent with every action live (knowledge, lead capture, escalation). The answer is `text/event-stream`. 429 past 10 messages per visitor per 10 s or 3,000 per widget per minute; 503 when the agent’s model has no provider key.',
          responses: { ...answers({ ...v1Errors(409, 429, 503) }), 200: SSE_DOC },
        },
      },
    )
    .post(
      '/:webKey/events',
      async ({ params, body, set }) => {
        const visitor = await web.visitor(params.webKey, body.session)
        const thread = visitorThread(visitor.agent.id, visitor.visitorId)
        return eventStream((deliver) => deps.teammates.follow(thread, deliver), { ...(set.headers as Record<string, string>), ...CORS })
      },
      {
        params: WebKeyParams,
        body: SessionOnly,
        detail: {
          summary: 'Messages from the team, as they are written (public)',
          description:
            'A long-lived `text/event-stream`: `ready`, then a `message` {id, author: teammate, text, createdAt} each time a person from the team writes to this visitor (console), and a comment every 25 s to keep proxies from closing it.',
          responses: { ...answers({ ...v1Errors(409) }), 200: { ...SSE_DOC, description: 'the team’s messages as Server-Sent Events: `ready`, then `message` per teammate message' } },
        },
      },
    )
    .post(
      '/:webKey/calls',
      async ({ params, body, set }) => {
        const visitor = await web.visitor(params.webKey, body.session)
        const call = await web.call(visitor, params.webKey, set.headers as Record<string, unknown>)
        set.status = 201
        return call
      },
      {
        params: WebKeyParams,
        body: SessionOnly,
        detail: {
          summary: 'Call the agent from the browser (public)',
          description:
            'A `voice` call on the `web` surface, answered at once by the published agent, on the plan’s call lines (429 when they are busy; 503 with Retry-After when this instance is at capacity). The browser then streams 16-bit PCM over the media bridge at `mediaPath`; the call is analysed and recorded like a phone call and listed by GET /calls.',
          responses: answers({ 201: CallAnswer, ...v1Errors(409, 429) }),
        },
      },
    )
    .post(
      '/:webKey/lead',
      async ({ params, body, set }) => {
        const visitor = await web.visitor(params.webKey, body.session)
        set.status = 201
        return web.lead(visitor, { name: body.name, email: body.email, phone: body.phone })
      },
      {
        params: WebKeyParams,
        body: WelcomeForm,
        detail: {
          summary: 'The welcome form’s details (public)',
          description: 'Name, email and/or phone the visitor gave before the first message (`widget.welcomeCollectLeads`): sends `lead.captured` for the visitor’s conversation.',
          responses: answers({ 201: LeadAnswer, ...v1Errors(409) }),
        },
      },
    )
}
