/**
 * The media bridge's per-call token: an HMAC of the call and try under the service's secret key.
 * It "expires with the call" because the bridge also requires the try to be live (connected) when
 * the socket starts; a token of an ended try opens nothing. It travels in the path
 * (`/media/{callId}/{token}`) or as the TwiML `<Parameter name="token">` that Twilio hands back in
 * `start.customParameters`, never in a query string (Twilio's `<Stream url>` takes none).
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export class MediaTokens {
  constructor(private readonly secretKey: string) {}

  issue(callId: string, attempt: number): string {
    // Recording links sign `rec:<callId>` with the same key: a media token never opens a recording, nor the reverse.
    return createHmac('sha256', this.secretKey).update(`media:${callId}:${attempt}`).digest('base64url').slice(0, 32)
  }

  verify(callId: string, attempt: number, token: string | undefined): boolean {
    if (!token) return false
    const want = Buffer.from(this.issue(callId, attempt))
    const got = Buffer.from(token)
    return got.length === want.length && timingSafeEqual(got, want)
  }
}
