/**
 * The turn-taking corpus (bench:turn-taking): caller utterances written out here and made into
 * audio by audio.ts (espeak-ng, varied voices and rates; noises from a seeded generator). No
 * recording from elsewhere. Every turn case is said again by a second synthesiser family, flite
 * (Festival's: diphone and clustergen voices whose pitch and timing come from recorded speech,
 * where espeak-ng's formant voices follow rules): a rule tuned to one family's tune shows up as a
 * gap between the two columns the benches print. Two kinds:
 *
 *  - `turn`: the caller speaks once the agent is quiet. `complete` cases are said in one go;
 *    `unfinished` ones carry pauses where people pause inside a turn, and the caller goes on
 *    after each. A pause the agent takes as the end of the turn is a false cut-off; the wait
 *    after the last word is the complete-turn wait.
 *  - `overlap`: said while the agent talks (its long opening). A backchannel, a noise or the
 *    agent's own voice leaking back must not stop it; an interruption must, quickly.
 *
 * Pieces that go on after a pause end on a comma, the way espeak-ng gives a clause the level or
 * rising tune of a continuation; the `settled` family ends them on a full stop (a falling tune)
 * instead: a turn that sounds done and is not, the hard case for any rule on audio.
 *
 * Where the families and their pause lengths come from:
 *  - questions, requests, short answers: what callers say to a shop, a clinic or a delivery
 *    line (bench/turn-corpus.ts, the README walkthrough's "Do you take new patients?");
 *  - hesitations ("um", "uh" and a silent pause after it): Clark & Fox Tree (2002), "Using uh
 *    and um in spontaneous speaking": "uh" announces a short delay, "um" a longer one; the
 *    silent pause after them runs ~0.3–1.5 s, here 450–1,000 ms;
 *  - mid-clause breaths: Goldman-Eisler's pause studies; breath pauses inside a clause run
 *    250–600 ms, here 300–650 ms;
 *  - complete turns with short pauses inside (`short-pause`, 200–400 ms): the same studies'
 *    shorter hesitations, which a caller makes in most turns; the turn is complete, its wait
 *    counted, and a cut at its pause is a false cut-off like any other;
 *  - phone numbers, emails, dates, addresses read in groups: the cut-offs users report most
 *    (LiveKit agents #3701); groups of 3-3-4 digits with 400–900 ms between them, as people
 *    read from a card, letters of an email in chunks;
 *  - corrections ("Tuesday, no, Wednesday") and lists ("milk, eggs, and bread"): self-repair and
 *    list intonation (Levelt 1983; Selting's list constructions), 400–850 ms between items;
 *  - backchannels ("mhm", "uh-huh", "okay", "yeah"): Yngve (1970) and Ward & Tsukahara (2000),
 *    the listener's tokens that do not claim the turn;
 *  - coughs, clatter, breaths and rustle: generated noise (audio.ts `noise`), at -12 to -24 dBFS;
 *  - echo: the agent's own audio leaking back at -20 dB after 20–120 ms, as on a speakerphone
 *    (ITU-T G.168 asks for at least 6 dB of echo return loss from the hybrid; a speakerphone
 *    without cancellation is commonly 15–25 dB down);
 *  - interruptions: the line test's "Sorry, can I ask something?" and what callers say to stop
 *    an agent that has it wrong (objections, corrections, asking for a person).
 */

export type Piece = { say: string; voice?: string; rate?: number; amplitude?: number } | { pauseMs: number } | { noise: 'cough' | 'clatter' | 'breath' | 'rustle'; levelDb?: number }

export interface TurnCase {
  id: string
  family: string
  kind: 'turn'
  /** `complete` may still hold short pauses (the `short-pause` family); `unfinished`: the caller goes on after each pause. */
  label: 'complete' | 'unfinished'
  voice: string
  rate: number
  pieces: Piece[]
}

export interface OverlapCase {
  id: string
  family: string
  kind: 'overlap'
  label: 'backchannel' | 'noise' | 'echo' | 'interruption'
  voice: string
  rate: number
  pieces: Piece[]
  /** The caller starts this far into the agent's audio as the caller hears it. */
  atMs: number
  /** The agent's own audio mixed back into the caller's line (a speakerphone). */
  echo?: { db: number; delayMs: number }
}

export type Case = TurnCase | OverlapCase

/** espeak-ng voices and variants (`espeak-ng --voices=en`, `--voices=variant`): accents, pitches, sexes. */
const VOICES = ['en-us', 'en-us+f3', 'en-gb+m3', 'en-us+f2', 'en-gb-scotland', 'en-029+f4', 'en-us-nyc', 'en-gb-x-rp+m5', 'en-us+f5', 'en-gb+m7', 'en-gb-x-gbcwmd+f1', 'en-us+m2']
/** flite's voices (`flite -lv`; awb_time speaks only times): US female and male, Scottish male, the 16 kHz diphone voice. */
const FLITE_VOICES = ['flite:slt', 'flite:rms', 'flite:awb', 'flite:kal16']
/** The two synthesiser families, reported apart. */
export type Synth = 'espeak-ng' | 'flite'
export const synthOf = (voice: string): Synth => (voice.startsWith('flite:') ? 'flite' : 'espeak-ng')
/** Words a minute: slow and careful to brisk (espeak-ng's default is 175). */
const RATES = [145, 160, 175, 190, 205, 170, 155, 185]

/** An echo case listens to this much of the agent's opening leaking back (about two of its sentences). */
export const ECHO_SPAN_MS = 6_000

const cases: Case[] = []
const pick = () => {
  const i = cases.length
  return { voice: VOICES[i % VOICES.length]!, rate: RATES[(i * 3) % RATES.length]! }
}
const complete = (family: string, text: string) => cases.push({ id: `${family}-${cases.length}`, family, kind: 'turn', label: 'complete', ...pick(), pieces: [{ say: text }] })
/** Text pieces with the pause (ms) that follows each but the last: "a |500| b". */
const unfinished = (family: string, script: string, label: TurnCase['label'] = 'unfinished') => {
  const pieces: Piece[] = []
  for (const part of script.split(/\|(\d+)\|/)) {
    if (/^\d+$/.test(part)) pieces.push({ pauseMs: Number(part) })
    else if (part.trim()) pieces.push({ say: part.trim() })
  }
  cases.push({ id: `${family}-${cases.length}`, family, kind: 'turn', label, ...pick(), pieces })
}
const overlap = (family: string, label: OverlapCase['label'], pieces: Piece[], atMs: number, echo?: OverlapCase['echo']) =>
  cases.push({ id: `${family}-${cases.length}`, family, kind: 'overlap', label, ...pick(), pieces, atMs, ...(echo ? { echo } : {}) })

// Complete: questions (wh- and yes/no), requests and statements, short answers, numbers said in one breath.
for (const q of [
  'What time do you open on Sunday?',
  'Do you take new patients?',
  'Do you have parking?',
  'Where are you located?',
  'How much does delivery cost?',
  'Is the shop open on Monday?',
  'Can I bring my dog inside?',
  'How long does shipping take?',
  'Are you open on public holidays?',
  'Can I change my appointment?',
  'What is the price of a large pizza?',
  'Do you deliver to the airport?',
  'Is there a fee for cancelling?',
  'When will my parcel arrive?',
  'Who should I talk to about a refund?',
  'Can you send me the invoice by email?',
  'How do I reset my password?',
  'Do you accept credit cards?',
  'Is the doctor available this afternoon?',
  'Could you repeat that please?',
  'What are your opening hours?',
  'Why was my card charged twice?',
  'Can I pay in cash when it arrives?',
  'Is my order ready for pickup?',
  'Which size would you recommend?',
  'Do I need to bring anything with me?',
  'How far is it from the station?',
  'Can you hold the table until eight?',
])
  complete('question', q)
for (const s of [
  'I would like to book a table for two tonight.',
  'I want to cancel my order.',
  'I need to move my appointment to next week.',
  'My parcel never arrived.',
  'Please call me back tomorrow morning.',
  'I am calling about my bill.',
  'I would like to speak to the manager.',
  'The address on the order is wrong.',
  'We will be there at seven.',
  'I already paid for it online.',
  'My name is Priya Sharma.',
  'I ordered the blue one, not the red one.',
  'I lost my card yesterday.',
  'I want to renew my subscription.',
  'The heating in my flat is broken.',
  'I think there is a mistake on my invoice.',
  'We need a table for six on Friday.',
  'I would like to order a large coffee.',
])
  complete('request', s)
for (const a of [
  'Yes.',
  'No.',
  'Yes please.',
  'No thank you.',
  "That's right.",
  'Okay.',
  'Sure.',
  'Thanks, bye.',
  'Perfect, thank you.',
  'Not really.',
  'Yes, I do.',
  "No, that's all.",
  'Sounds good.',
  'Exactly.',
  'Of course.',
  'Great, thanks.',
  'Absolutely.',
  "I don't think so.",
])
  complete('short-answer', a)
for (const n of [
  'My number is four one five five five five zero one two three.',
  'The order number is four eight two one three.',
  'It was on the third of March.',
  'My postcode is S W one A one A A.',
  'The booking reference is K L seven nine.',
  'Tomorrow at half past three.',
])
  complete('number-in-one-go', n)

// Unfinished: pauses inside the turn, the caller goes on after each.
for (const s of [
  'I was wondering, um, |700| if you have any tables left tonight.',
  'Um, |800| I need to change my booking.',
  'So, uh, |500| the thing is, my parcel is late.',
  'I would like to order, um, |900| two large pizzas.',
  'Can I, uh, |450| come in on Thursday instead?',
  'My name is, um, |750| Daniel Okafor.',
  'I need, uh, |550| a refund for the last order.',
  'Well, um, |1000| I am not sure which one I want.',
  'The problem is, um, |650| the heating does not work.',
  'Could you, uh, |500| tell me the price of delivery?',
  'I was told, um, |850| that it would arrive on Monday.',
  'We are, uh, |600| five people, maybe six.',
  'Um, |700| what time do you close today?',
  'It is about, uh, |500| my appointment next week.',
  'I think, um, |950| the size was wrong.',
  'Uh, |550| can you check my order please?',
])
  unfinished('hesitation', s)
for (const s of [
  'I would like to book a table for |400| four people on Saturday.',
  'The delivery driver left the parcel at |350| the wrong house.',
  'Can you tell me if the |300| pharmacy is open late?',
  'I need to cancel the appointment I made |500| for my daughter.',
  'We bought a sofa from you and |450| one of the legs is broken.',
  'I am calling because my |400| internet has been down since Tuesday.',
  'Is it possible to change the |350| delivery address?',
  'My husband ordered a cake for |600| our anniversary on Friday.',
  'Do you still have the |400| green jacket in medium?',
  'I would like to know why my |500| bill went up this month.',
  'The doctor said I should come back in |650| two weeks.',
  'Could you send someone to look at |450| the boiler tomorrow?',
  'I called yesterday about a |300| missing refund.',
  'We are flying out on |550| the twelfth and need a taxi.',
])
  unfinished('breath', s)
for (const s of [
  'My number is four one five, |600| five five five, |700| zero one two three.',
  'It is oh seven seven, |500| nine zero zero, |650| one two three four.',
  'Call me on two one two, |800| five five five, |900| four four three two.',
  'My phone is six four seven, |550| three one eight, |600| two two nine one.',
  'The number is eight zero zero, |450| two four six, |700| one three five seven.',
  'You can reach me at three one two, |650| seven seven zero, |500| nine eight eight one.',
  'It is plus four four, |700| seven nine one one, |600| one two three four five six.',
  'My mobile is five one zero, |400| four four four, |850| six seven eight nine.',
  'Four one five, |600| two two two, |750| three three three three.',
  'The account number is one two three four, |600| five six seven eight.',
  'My card ends in four four, |500| nine one.',
  'The order number is seven seven, |700| three two, |550| one.',
])
  unfinished('phone-number', s)
for (const s of [
  'My email is j smith, |700| at gmail, |600| dot com.',
  'It is priya dot sharma, |800| at outlook, |500| dot com.',
  'The address is d, |500| o, |500| e, |650| at example dot org.',
  'Send it to info, |600| at bean there, |700| dot co dot uk.',
  'My email is mark, |550| underscore jones, |650| at yahoo dot com.',
  'It is a l e x, |700| eighty seven, |600| at hotmail dot com.',
  'You can write to k dot lee, |750| at work mail, |500| dot net.',
  'My email is anna, |600| dash maria, |700| at proton dot me.',
])
  unfinished('email', s)
for (const s of [
  'It was on the fourteenth, |500| of March.',
  'Can I come on Tuesday, |600| at about ten?',
  'The appointment was for the second, |450| in the afternoon.',
  'We arrive on the twenty first, |700| and leave on the twenty fifth.',
  'My date of birth is the ninth of June, |600| nineteen eighty four.',
  'Next Friday, |550| around half past six.',
  'Sometime in the morning, |650| before eleven if possible.',
  'The fifth of May, |500| no later than noon.',
])
  unfinished('date', s)
for (const s of [
  'I live at twelve forty five, |700| Oak Street, |600| apartment three.',
  'The address is twenty two, |600| Baker Street, |500| London.',
  'Deliver it to flat four, |650| ninety Main Road, |700| Springfield.',
  'It is one hundred, |550| Market Street, |800| suite two hundred.',
  'My address is seven, |600| Elm Close, |650| Bristol, |500| B S one.',
  'Send it to the office at fifty, |700| Park Lane.',
  'I am at thirty three, |600| River View, |550| second floor.',
  'The house is number nine, |750| on Hill Crescent.',
])
  unfinished('address', s)
for (const s of [
  'I want to come on Tuesday, |500| no, |400| Wednesday.',
  'The order was for two, |600| sorry, |450| three boxes.',
  'My number ends in four five, |700| no wait, |500| five four.',
  'We are four people, |600| actually, |500| make that five.',
  'It was delivered on Monday, |550| I mean Sunday.',
  'I ordered the large, |650| no, the medium one.',
  'The name is Jon, |500| without an h.',
  'At seven, |600| or rather, |450| half past seven.',
])
  unfinished('correction', s)
for (const s of [
  'I need milk, |500| eggs, |600| and bread.',
  'Can I get a pizza, |550| two salads, |650| and a cola?',
  'We want the soup, |600| the fish, |500| and a dessert to share.',
  'The kit has a charger, |450| a cable, |700| and a case.',
  'I am free on Monday, |500| Wednesday, |600| and Friday.',
  'Please bring towels, |650| soap, |550| and some extra pillows.',
  'I had a coffee, |600| a muffin, |500| and a juice.',
  'Red, |500| blue, |600| or green would all be fine.',
])
  unfinished('list', s)
// The hard family: each piece before the pause sounds finished (a falling tune on a full stop).
for (const s of [
  'My parcel never arrived. |600| And nobody called me about it.',
  'I booked for two people. |700| But now we are three.',
  'I called last week. |550| Nobody has called back.',
  'The order was wrong. |650| It had no cheese on it.',
  'We moved house. |600| So the address needs changing.',
  'I paid online. |500| The money left my account twice.',
])
  unfinished('settled', s)

// Overlap: over the agent's opening.
const BACKCHANNELS = ['Mhm.', 'Uh-huh.', 'Okay.', 'Yeah.', 'Right.', 'I see.', 'Mm.', 'Yep.', 'Sure.', 'Got it.', 'Okay, yeah.', 'Mm-hmm.']
BACKCHANNELS.forEach((b, i) => {
  overlap('backchannel', 'backchannel', [{ say: b }], 1_500 + (i % 4) * 400)
  overlap('backchannel', 'backchannel', [{ say: b, amplitude: 90 }], 2_300 + (i % 3) * 500)
})
;(['cough', 'clatter', 'breath', 'rustle'] as const).forEach((kind, i) => {
  for (const [k, levelDb] of [-12, -18, -24].entries()) overlap('noise', 'noise', [{ noise: kind, levelDb }], 1_600 + ((i + k) % 4) * 350)
})
for (const delayMs of [20, 40, 60, 80, 100, 120, 40, 80, 60, 100]) overlap('echo', 'echo', [], ECHO_SPAN_MS, { db: -20, delayMs })
for (const s of [
  'Sorry, can I ask something?',
  'Wait, that is not my address.',
  'Hold on, I already paid for that.',
  'No, I said Tuesday, not Thursday.',
  'Excuse me, can you repeat the time?',
  'Actually, I need to cancel it.',
  'Stop, that is wrong.',
  'Can I speak to a person please?',
  'Sorry to interrupt, but I am driving.',
  'Hang on, which parcel is this?',
  'No no, I moved last month.',
  'Can you call me later instead?',
  'Wait, wait, I have a question.',
  'Sorry, I did not catch that.',
  'That is not what I ordered.',
  'Is this going to take long?',
  'Hello? Can you hear me?',
  'Just a second, please.',
  // One word (or two) is enough to stop an agent, and must never pass for a backchannel.
  'Stop.',
  'No.',
  'Wait.',
  'Hold on.',
])
  overlap('interruption', 'interruption', [{ say: s }], 1_500 + (cases.length % 5) * 300)

// Complete turns with a short pause inside (200–400 ms), where a breath or a word search falls.
for (const s of [
  'Do you take, |300| new patients?',
  'I would like to book, |250| a table for two tonight.',
  'Can I bring, |200| my dog inside?',
  'My parcel, |350| never arrived.',
  'What time do you, |300| open on Sunday?',
  'I want to cancel, |250| my order.',
  'Is the doctor available, |400| this afternoon?',
  'How much does, |300| delivery cost?',
  'Please call me back, |350| tomorrow morning.',
  'We need a table, |250| for six on Friday.',
  'Can you send me, |300| the invoice by email?',
  'I lost, |200| my card yesterday.',
  'Yes, |300| that is right.',
  'No, |250| thank you.',
  'The heating, |400| in my flat is broken.',
  'Okay, |350| sounds good.',
])
  unfinished('short-pause', s, 'complete')

// The second family: every turn case again, in a flite voice at the case's rate.
const turns = cases.filter((c): c is TurnCase => c.kind === 'turn')
for (const [i, c] of turns.entries()) cases.push({ ...c, id: `${c.id}-flite`, voice: FLITE_VOICES[i % FLITE_VOICES.length]! })

export const CORPUS: readonly Case[] = cases
