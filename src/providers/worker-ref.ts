/** The engines' worker threads (the speech decoders, espeak-ng's synthesisers) and the process's life. */

/** Whether the process may exit while `worker` lives: a thread at work keeps it, an idle one does not. */
export function keepAlive(worker: Worker, yes: boolean): void {
  // Bun's Worker has ref/unref; the DOM typings the project also loads do not declare them.
  const w = worker as unknown as { ref(): void; unref(): void }
  if (yes) w.ref()
  else w.unref()
}
