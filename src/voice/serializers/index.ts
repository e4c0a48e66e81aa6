/**
 * The media-socket protocol each telephony provider speaks, by the provider's name (`Telephony.name`).
 * A provider with a protocol of its own adds its serializer beside twilio.ts and one line here.
 * The sandbox network (its callees, the console, browsers) speaks Twilio Media Streams.
 */
import { byStart } from './by-start'
import type { SerializerFactory } from './port'
import { TelnyxSerializer } from './telnyx'
import { TwilioSerializer } from './twilio'

/** Twilio Media Streams (serializers/twilio.ts): what Twilio, the sandbox callee and browsers speak. */
export const twilioMediaStreams: SerializerFactory = () => new TwilioSerializer()

/** Telnyx's media streaming (serializers/telnyx.ts), beside the sandbox's Twilio protocol: Telnyx's `start` names `stream_id`. */
export const telnyxMediaStreaming: SerializerFactory = byStart([
  { owns: (start) => typeof start.stream_id === 'string', serializer: () => new TelnyxSerializer() },
  { owns: () => true, serializer: twilioMediaStreams },
])

export const SERIALIZERS: Readonly<Record<string, SerializerFactory>> = {
  twilio: twilioMediaStreams,
  sandbox: twilioMediaStreams,
  telnyx: telnyxMediaStreaming,
}

/** The serializer of `provider`'s media sockets; a provider with none registered is a build error, not a call that fails. */
export function serializerFor(provider: string): SerializerFactory {
  const serializer = SERIALIZERS[provider]
  if (!serializer) throw new Error(`no media serializer for telephony provider "${provider}" (src/voice/serializers/index.ts)`)
  return serializer
}
