/** The benchmarks' summary statistics. */

/** The nearest-rank percentile `p` (0–100) of `xs` (unsorted); NaN when there are none. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : Number.NaN
}
