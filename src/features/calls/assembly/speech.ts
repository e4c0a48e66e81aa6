/**
 * The speech engines calls listen and talk with (SpeechProviders), their gauges on /metrics, and
 * the sandbox callee's side: what it says reaches the instance its stream lands on.
 */
import type { Coordination } from '../../../coordination/port'
import type { Kernel } from '../../../kernel/feature'
import { SpeechProviders } from '../../../providers/speech'
import { SandboxScripts } from '../../../providers/stt/sandbox'
import type { SandboxNetwork } from '../../../providers/telephony/sandbox'
import { SandboxTts } from '../../../providers/tts/sandbox'
import type { MediaTokens } from '../../../voice/public'
import type { LiveStreams } from '../live/media'
import { RelayedScripts } from '../live/sandbox-relay'

export interface Speech {
  speech: SpeechProviders
  /** What sandbox callers say, as this instance's speech-to-text hears it. */
  scripts: SandboxScripts
}

export function buildSpeech(
  kernel: Pick<Kernel, 'config' | 'metrics' | 'listening'>,
  lines: {
    sandbox: SandboxNetwork
    tokens: MediaTokens
    several: boolean
    coordination: Coordination
    /** The live streams here: a simulated call's callee keeps to its session's pace. */
    live: LiveStreams
  },
): Speech {
  const { config, metrics } = kernel
  const scripts = new SandboxScripts()
  const speech = new SpeechProviders(config, scripts)
  const decoders = () => speech.decoders ?? { busy: 0, idle: 0, queued: 0, refused: 0 }
  metrics.sttDecoders.from(() => ['busy', 'idle', 'queued'].map((state) => ({ labels: { state }, value: decoders()[state as 'busy'] })))
  metrics.sttUtterancesRefused.from(() => decoders().refused)
  metrics.ttsSynthesizers.from(() => {
    const s = speech.synthesis ?? { started: 0, busy: 0, queued: 0 }
    return [
      { labels: { state: 'busy' }, value: s.busy },
      { labels: { state: 'idle' }, value: s.started - s.busy },
      { labels: { state: 'queued' }, value: s.queued },
    ]
  })
  const hasEspeak = !!Bun.which('espeak-ng')
  // The callee dials SANDBOX_MEDIA_URL (a load balancer, another instance) or this process; with
  // several instances what it says reaches the instance its stream lands on (live/sandbox-relay.ts).
  const calleeScripts = lines.several ? new RelayedScripts(lines.coordination) : scripts
  lines.sandbox.attachMedia({
    baseUrl: () => config.sandboxMediaUrl ?? kernel.listening.url,
    token: (callId, attempt) => lines.tokens.issue(callId, attempt),
    scripts: calleeScripts,
    pace: (callId) => lines.live.get(callId)?.session.pace ?? null,
    tts: () => (hasEspeak ? speech.espeak() : new SandboxTts()),
  })
  return { speech, scripts }
}
