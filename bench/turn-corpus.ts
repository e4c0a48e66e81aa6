/**
 * Utterances at the moment a caller pauses, for measuring the end-of-turn rules (bench:turns):
 * what the engine has heard so far, whether the caller goes on after the pause, and how long that
 * pause lasts. Pauses inside one speaker's turn run 500–700 ms in conversation (a hesitation or a
 * number read out in groups: 300–900 ms); these are typical cases, written out, not a recording.
 */
export interface CorpusUtterance {
  heard: string
  goesOn: boolean
  /** The pause before the caller goes on (unfinished ones only). */
  pauseMs: number
}

const unfinished = (heard: string, pauseMs: number): CorpusUtterance => ({ heard, goesOn: true, pauseMs })
const complete = (heard: string): CorpusUtterance => ({ heard, goesOn: false, pauseMs: 0 })

export const TURN_CORPUS: CorpusUtterance[] = [
  complete('What time do you open on Sunday?'),
  complete('what time do you open on sunday'),
  complete('Do you have parking?'),
  complete('what are your opening hours'),
  complete('yes'),
  complete('no thank you'),
  complete("that's right"),
  complete('okay'),
  complete('thanks, bye'),
  complete('I would like to book a table for two tonight.'),
  complete('can you call me back tomorrow at three'),
  complete('my number is 415 555 0123'),
  complete('how much does delivery cost'),
  complete('is the shop open on monday'),
  complete('I want to cancel my order.'),
  complete('sure'),
  complete('where are you located'),
  complete('my name is Priya'),
  complete('the order number is 48213'),
  complete('no'),
  complete('yes please'),
  unfinished('I want to book a table and', 600),
  unfinished('so', 700),
  unfinished('what are your opening', 300),
  unfinished('um', 800),
  unfinished('my number is 415', 500),
  unfinished('my number is 415 555', 450),
  unfinished('four one five', 500),
  unfinished('I was wondering if', 600),
  unfinished('can I come on the', 500),
  unfinished("I'm calling because", 650),
  unfinished('yes and', 500),
  unfinished('maybe next week,', 600),
  unfinished('the thing is', 700),
  unfinished('I would like to order a', 500),
  unfinished('could you tell me', 500),
  unfinished('on the 3rd of march', 400),
  unfinished('we are coming with my', 550),
  unfinished('I need to change the', 500),
  unfinished('hi, I ordered a cake yesterday', 600),
  unfinished('what time', 400),
  unfinished('the delivery never arrived', 650),
]
