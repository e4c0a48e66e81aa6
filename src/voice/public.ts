/**
 * The voice module's public face: everything outside src/voice imports the module from here
 * (`npm run deps`, rule voice-imports-public-face). The calls feature takes the bridge, the session
 * and what a call records; the engines in src/providers take the ports they implement (ports/) and
 * the codecs and keypad tones the sandbox callee speaks with; agents, simulations and metrics take
 * the dials, keypad lines and latency figures they show.
 */
export { type Attached, CLOSE, MEDIA_PREFIX, type MediaCalls, mediaBridge, type Refusal, type StreamInfo } from './bridge'
export { decodeMulaw, encodeMulaw, joinPcm, PHONE_RATE, resample } from './codecs'
export { DEFAULT_DIALS, PATIENCE_LEVELS, SPEED_MAX, SPEED_MIN, type VoiceDials } from './dials'
export { TRAILING_WAIT_MS } from './end-of-turn'
export type { OutboundFrame } from './frames'
export { KEYPAD_LINE, KeypadListener, keypadLine, keypadTones } from './keypad'
export { stagesOf, summariseLatency, type TurnLatency, type TurnStages } from './latency'
export { PhraseCache } from './phrase-cache'
export { VOICE_LINES } from './phrases'
export { playoutLead } from './playout-lead'
export { type RealtimeEvent, type RealtimeLink, type RealtimeUsage, usageOf } from './ports/realtime'
export { type AssemblyAiTurnSettings, SpeechError, type SpeechToText, type SpeechToTextOptions, type SttCapabilities, type SttPartial, type SttSession, type SttTurnEvent } from './ports/stt'
export { pcm16, type SynthesisOptions, type TextToSpeech, type WordTiming } from './ports/tts'
export { type RealtimeLine, RealtimeSession } from './realtime-session'
export { callerWav, finishLeftRecording, Recorder, type RecordingTimeline, wavOf, wavSamples } from './recorder'
export { serializerFor } from './serializers'
export { MAX_MESSAGE_BYTES } from './serializers/twilio'
export { type CallLine, HAND_OFF_SENTENCE_MS, type LiveSession, type PipelineState, type SessionParts, VoiceSession } from './session'
export { StreamClock } from './stream-clock'
export { MediaTokens } from './tokens'
export { LOCAL_WAITS } from './turn-waits'
export { loadSilero, type VoiceActivity, voiceActivity } from './vad'
