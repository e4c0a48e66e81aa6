/**
 * The phone lines a call goes out and comes in on: the sandbox network (always there: its console
 * routes and inbound simulation), Twilio or Telnyx as TELEPHONY_PROVIDER says, and the media tokens all
 * hand to the stream they open.
 */
import { randomBytes } from 'node:crypto'
import type { Kernel } from '../../../kernel/feature'
import type { CarrierAccountOf, Telephony } from '../../../providers/telephony/port'
import { SandboxNetwork } from '../../../providers/telephony/sandbox'
import { TelnyxTelephony } from '../../../providers/telephony/telnyx'
import { TwilioTelephony } from '../../../providers/telephony/twilio'
import { MediaTokens } from '../../../voice/public'
import { switchOfInstance } from '../control/lost-switches'
import { type CallTryRepo, tryId } from '../records/repository'

export interface Lines {
  sandbox: SandboxNetwork
  twilio: TwilioTelephony | null
  telnyx: TelnyxTelephony | null
  /** Where calls go out: Twilio or Telnyx when configured, else the sandbox. */
  telephony: Telephony
  tokens: MediaTokens
  /** Several instances share the calls (REDIS_URL): each runs a switch of the sandbox network. */
  several: boolean
  /** This instance's sandbox switch, named in its call references (control/lost-switches.ts); null alone. */
  switchId: string | null
}

/** `accountOf`: a number's own carrier account, when its holder brought one (the phone numbers' `carrierAccount`). */
export async function buildLines(kernel: Pick<Kernel, 'store' | 'clock' | 'coordination' | 'runtime' | 'config'>, tries: CallTryRepo, accountOf?: CarrierAccountOf): Promise<Lines> {
  const { config, coordination } = kernel
  const several = coordination.kind === 'redis'
  const switchId = several ? switchOfInstance(kernel.runtime.instanceId) : null
  const sandbox = await SandboxNetwork.open(kernel.store, kernel.clock, switchId)
  // SECRET_KEY is always set by the server (persisted in DATA_DIR when not given); a bare
  // buildServices (some tests) gets a key for this process only.
  const tokens = new MediaTokens(config.secretKey ?? randomBytes(32).toString('hex'))
  // The caller is still on the line and the transfer has not ended (the row is the chart's projection).
  const transferOpen = async (callId: string, attempt: number) => {
    const row = await tries.get(tryId(callId, attempt)).catch(() => null)
    return row?.status === 'connected' && !!row.transfer && row.transfer.outcome === null
  }
  const twilio =
    config.telephonyProvider === 'twilio'
      ? new TwilioTelephony({
          accountSid: config.providers.twilioAccountSid!,
          authToken: config.providers.twilioAuthToken!,
          apiBaseUrl: config.providers.twilioApiBaseUrl ?? 'https://api.twilio.com',
          publicBaseUrl: config.publicBaseUrl,
          mediaToken: (callId, attempt) => tokens.issue(callId, attempt),
          transferOpen,
        })
      : null
  const { providers } = config
  const telnyx =
    config.telephonyProvider === 'telnyx'
      ? new TelnyxTelephony({
          apiKey: providers.telnyxApiKey!,
          connectionId: providers.telnyxConnectionId!,
          publicKey: providers.telnyxPublicKey!,
          apiBaseUrl: providers.telnyxApiBaseUrl ?? 'https://api.telnyx.com',
          publicBaseUrl: config.publicBaseUrl,
          mediaToken: (callId, attempt) => tokens.issue(callId, attempt),
          accountOf,
          transferOpen,
          claims: coordination,
        })
      : null
  return { sandbox, twilio, telnyx, telephony: twilio ?? telnyx ?? sandbox, tokens, several, switchId }
}
