/**
 * Sending pace per platform number: at most `rate` sends a second from one number, across every
 * campaign this process runs (a platform limits a number, not a campaign). WhatsApp's Cloud API
 * allows 80 messages a second per number by default (its "throughput" tier), hence the default
 * with the WhatsApp platform; the sandbox is unpaced. `CAMPAIGN_SEND_RATE` sets it (0: unpaced).
 * Real time, not the service clock: pacing protects a live platform.
 */
export class Pacer {
  private readonly next = new Map<string, number>()

  constructor(private readonly rate: number) {}

  async take(key: string): Promise<void> {
    if (this.rate <= 0) return
    const now = performance.now()
    const at = Math.max(now, this.next.get(key) ?? 0)
    this.next.set(key, at + 1000 / this.rate)
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now))
  }
}
