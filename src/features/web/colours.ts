/** The widget's colours: the agent's accent (or the theme's default) and the text colour that reads on it. */

/** Defaults when `widget.accent` is null: a blue for `modern`, a navy for `classic` (white text on both passes WCAG AA). */
const DEFAULT_ACCENT = { modern: '#2454d6', classic: '#1f3a5f' } as const

/** Black or white, whichever contrasts more with `hex` (WCAG 2 relative luminance and contrast ratio). */
export function textOn(hex: string): '#111111' | '#ffffff' {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const v = parseInt(hex.slice(i, i + 2), 16) / 255
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
  })
  const l = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
  return (l + 0.05) / 0.05 > 1.05 / (l + 0.05) ? '#111111' : '#ffffff'
}

export function widgetColours(widget: { theme: string; accent: string | null }): { accent: string; onAccent: string } {
  const accent = widget.accent ?? (widget.theme === 'classic' ? DEFAULT_ACCENT.classic : DEFAULT_ACCENT.modern)
  return { accent, onAccent: textOn(accent) }
}
