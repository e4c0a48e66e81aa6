/** The visitor API's schemas: widget settings, sessions, messages, the welcome form. */
import { t } from 'elysia'
import { WEB_MESSAGE_MAX } from './limits'

export const WebKeyParams = t.Object({ webKey: t.String({ description: 'the agent’s website widget key (`wk_…`)' }) })

const Session = t.String({ minLength: 1, maxLength: 100, description: 'the `session` a start answered (`wv_…`)' })

export const WidgetSettings = t.Object({
  agent: t.Object({
    name: t.String(),
    greeting: t.String({ description: 'shown as the first message of a new chat' }),
    language: t.String({ description: 'the agent’s language (`auto`: the visitor’s); the page’s `lang`' }),
  }),
  widget: t.Object({
    theme: t.Union([t.Literal('classic'), t.Literal('modern')]),
    accent: t.Union([t.String(), t.Null()]),
    height: t.Integer(),
    welcomeScreen: t.Boolean(),
    welcomeCollectLeads: t.Boolean(),
  }),
  colours: t.Object({
    accent: t.String({ description: '`widget.accent`, or the theme’s default' }),
    onAccent: t.String({ description: 'text colour on the accent: black or white, whichever contrasts more (WCAG)' }),
  }),
  call: t.Boolean({ description: 'true when the agent’s voice has the `web` surface: the widget shows a call button' }),
})

export const StartSession = t.Object({ session: t.Optional(Session) }, { additionalProperties: false })

export const WebMessage = t.Object({
  id: t.String(),
  author: t.Union([t.Literal('customer'), t.Literal('teammate'), t.Literal('agent')]),
  text: t.String(),
  createdAt: t.String(),
})

export const SessionAnswer = t.Object({
  session: t.String({ description: 'keep it (the widget uses localStorage) and send it with every message' }),
  resumed: t.Boolean(),
  conversationId: t.Union([t.String(), t.Null()], { description: 'null until the visitor first writes or fills the welcome form' }),
  messages: t.Array(WebMessage, { description: 'the conversation so far, oldest first (the newest 50)' }),
})

export const SendMessage = t.Object(
  {
    session: Session,
    message: t.String({ minLength: 1, maxLength: WEB_MESSAGE_MAX, description: `what the visitor writes, 1–${WEB_MESSAGE_MAX} characters` }),
  },
  { additionalProperties: false },
)

export const WelcomeForm = t.Object(
  {
    session: Session,
    name: t.Optional(t.String({ maxLength: 100 })),
    email: t.Optional(t.String({ maxLength: 254, description: 'RFC 5321’s longest address' })),
    phone: t.Optional(t.String({ maxLength: 32 })),
  },
  { additionalProperties: false },
)

export const LeadAnswer = t.Object({
  conversationId: t.String(),
  name: t.Union([t.String(), t.Null()]),
  email: t.Union([t.String(), t.Null()]),
  phone: t.Union([t.String(), t.Null()], { description: 'E.164 when readable' }),
})

export const SessionOnly = t.Object({ session: Session }, { additionalProperties: false })

export const CallAnswer = t.Object({
  callId: t.String({ description: 'the call (`in_…`): GET /calls/{id} once it ends' }),
  mediaPath: t.String({ description: 'open a WebSocket to this path on this host and speak the media bridge protocol (Twilio Media Streams; `start.mediaFormat` `audio/l16` at the page’s rate)' }),
})
