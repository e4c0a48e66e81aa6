/**
 * Work to run after the manual clock moves (SERVICE_CLOCK=manual, `POST /console/clock/advance`),
 * by name: the actor runtime's durable timers first, then features that keep time of their own
 * (the sandbox phone network's scripted callees, media ends waiting for analysis, lost streams).
 * Hooks run one after another in the order they were registered, each seeing the effects of those
 * before it; an advance answers once all have run. A name is registered once, and a hook that
 * throws is reported with its name.
 */
export type ClockHook = (now: number) => Promise<void>

export class ClockHooks {
  private readonly hooks: { name: string; run: ClockHook }[] = []

  /** Runs `run` after every advance, after the hooks registered before it. */
  on(name: string, run: ClockHook): void {
    if (this.hooks.some((h) => h.name === name)) throw new Error(`a clock hook named ${name} is registered already`)
    this.hooks.push({ name, run })
  }

  /** The clock moved to `now`: every hook, in order. */
  async advanced(now: number): Promise<void> {
    for (const { name, run } of this.hooks) {
      try {
        await run(now)
      } catch (err) {
        throw new Error(`the clock hook ${name} failed: ${(err as Error).message}`, { cause: err })
      }
    }
  }

  /** The hooks' names, in the order they run. */
  get names(): string[] {
    return this.hooks.map((h) => h.name)
  }
}
