/**
 * A broadcast's template values for one contact: `{{1}}` is the contact's name (their number when
 * the contact has no name), the others the template's sample values (`variableLabels`). A blank
 * sample falls back to the name too, since WhatsApp refuses an empty template parameter.
 */
import type { TemplateDoc } from '../templates/public'

export interface ContactFields {
  name: string | null
  phone: string
}

export function personalise(template: Pick<TemplateDoc, 'variableCount' | 'variableLabels'>, contact: ContactFields): string[] {
  const name = contact.name?.trim() || contact.phone
  const sample = (i: number) => template.variableLabels.find((l) => l.position === i + 1)?.sample?.trim() ?? ''
  return Array.from({ length: template.variableCount }, (_, i) => (i === 0 ? name : sample(i) || name))
}
