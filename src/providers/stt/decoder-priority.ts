/**
 * Decoding yields the CPU to the service's event loop (the calls' playout, admission, `/health`):
 * on Linux a nice value belongs to the thread, so this lowers this decoder alone, by this much
 * from the service's own. Ten steps down the kernel weighs it 110 against the loop's 1,024
 * (sched_prio_to_weight), about a ninth of a contended core; a decoder held back shows as queue
 * wait, which admission control watches.
 */
export const DECODER_NICE = 10
/** The lowest priority the kernel gives (nice 19). */
export const MAX_NICE = 19
